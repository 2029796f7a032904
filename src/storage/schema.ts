import type { ColumnType, Generated, Kysely, Transaction } from 'kysely';

/** Timestamps are epoch milliseconds; JSON columns hold text; booleans are 0/1 on both engines. */
export interface SettingsTable {
  key: string;
  value: string;
}

export interface MembersTable {
  id: string;
  email: string;
  name: string;
  handle: string;
  tier: string;
  created_at: number;
  updated_at: number;
}

export interface TokensTable {
  id: string;
  member_id: string;
  hash: string;
  prefix: string;
  name: string;
  scopes: string;
  sandbox: number;
  source: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

/**
 * The signing-key columns of `tokens` (reference §7), apart from TokensTable so that a new token's row
 * need not name them: each is optional on insert.
 */
export interface TokenSigningColumns {
  /** The bound Ed25519 key: its id (`kid_` + JWK thumbprint) and public `x`; null when none. */
  signing_key_id: ColumnType<string | null, string | null | undefined, string | null>;
  signing_key_x: ColumnType<string | null, string | null | undefined, string | null>;
  signing_key_bound_at: ColumnType<number | null, number | null | undefined, number | null>;
  /** 1: a call with this token must be signed by the bound key. */
  signing_enforced: ColumnType<number, number | undefined, number>;
}

/** Nonces of accepted signatures, until the signature they came with could no longer be accepted. */
export interface SignatureNoncesTable {
  nonce_key: string;
  expires_at: number;
}

export interface SignInLinksTable {
  id_hash: string;
  email: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  /** SHA-256 of the asking browser's `__signin` cookie; null for links from before it was kept. */
  browser_hash: string | null;
}

/** An OpenID Connect login between the redirect to the provider and its callback (secrets hashed). */
export interface OidcLoginsTable {
  state_hash: string;
  browser_hash: string;
  next_path: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

export interface OperatorAuditTable {
  id: string;
  at: number;
  operator_id: string;
  action: string;
  target: string;
  outcome: string;
  detail: string;
}

export interface SessionsTable {
  id_hash: string;
  member_id: string;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
}

/** A client registered through RFC 7591 (a public client: no secret); redirect_uris is a JSON list. */
export interface OAuthClientsTable {
  client_id: string;
  client_name: string | null;
  redirect_uris: string;
  created_at: number;
  /** When it first got a code; a registration never used expires. */
  used_at: number | null;
}

/** One authorization request: pending, then decided, then its code exchanged (secrets hashed). */
export interface OAuthAuthorizationsTable {
  id: string;
  request_hash: string;
  client_id: string;
  client_name: string | null;
  redirect_uri: string;
  scopes: string;
  state: string | null;
  code_challenge: string;
  resource: string;
  status: string;
  created_at: number;
  expires_at: number;
  bound_session_hash: string | null;
  member_id: string | null;
  granted_scopes: string | null;
  sandbox: number;
  decided_at: number | null;
  code_hash: string | null;
  code_expires_at: number | null;
  token_id: string | null;
  exchanged_at: number | null;
}

export interface DeviceGrantsTable {
  id: string;
  device_code_hash: string;
  user_code_hash: string;
  scopes: string;
  client_name: string | null;
  sandbox: number;
  status: string;
  created_at: number;
  expires_at: number;
  interval_s: number;
  last_poll_at: number | null;
  member_id: string | null;
  granted_scopes: string | null;
  denied_scopes: string | null;
  decided_at: number | null;
  reason: string | null;
  token_id: string | null;
  ip: string | null;
  user_agent: string | null;
  bound_session_hash: string | null;
}

export interface CountersTable {
  key: string;
  count: number;
  expires_at: number;
}

export interface IdempotencyTable {
  key_hash: string;
  fingerprint: string;
  state: string;
  status: number | null;
  headers: string | null;
  body: string | null;
  created_at: number;
  expires_at: number;
}

/** An A2A task: one skill call and its result, readable by its member until expires_at. */
export interface A2aTasksTable {
  id: string;
  member_id: string;
  context_id: string;
  capability: string;
  state: string;
  /** The operation's answer body, JSON. */
  result: string;
  created_at: number;
  updated_at: number;
  expires_at: number;
}

export interface HighlightsTable {
  id: string;
  member_id: string;
  token_id: string;
  story: string;
  status: string;
  submitted_at: number;
  updated_at: number;
  expires_at: number;
  decided_at: number | null;
  decided_by: string | null;
}

export interface FeedbackTable {
  ticket_id: string;
  member_id: string | null;
  token_id: string | null;
  category: string;
  category_text: string | null;
  priority: string;
  message: string;
  url: string | null;
  expected: string | null;
  got: string | null;
  agent_id: string | null;
  contact: string | null;
  ip_hash: string;
  warnings: string;
  status: string;
  created_at: number;
}

export interface EventsTable {
  id: string;
  platform_url: string;
  title: string;
  start_at: number;
  end_at: number | null;
  location: string | null;
  cover_url: string | null;
  description: string | null;
  updated_at: number;
  /** `feed` (replaced on each refresh), `proposal` (an approved member proposal) or `local`. */
  source: string;
}

export interface RsvpsTable {
  id: string;
  event_url: string;
  member_id: string;
  token_id: string | null;
  email: string | null;
  name: string | null;
  /** queued → confirmed | failed; queued or confirmed → cancelled (the member withdrew it) */
  status: string;
  created_at: number;
  attempts: number;
  next_attempt_at: number;
  locked_until: number | null;
  settled_at: number | null;
  last_error: string | null;
}

export interface EventRequestsTable {
  id: string;
  member_id: string;
  token_id: string | null;
  /** The proposal as sent (JSON). */
  details: string;
  title: string;
  start_at: number;
  /** pending → approved | declined */
  status: string;
  created_at: number;
  decided_at: number | null;
  decided_by: string | null;
  reason: string | null;
  event_id: string | null;
}

export interface BookingsTable {
  id: string;
  resource_id: string;
  member_id: string;
  token_id: string | null;
  start_at: number;
  end_at: number;
  purpose: string;
  email: string | null;
  /** queued → confirmed | declined; queued or confirmed → cancelled (the member or an operator) */
  status: string;
  reason: string | null;
  created_at: number;
  locked_until: number | null;
  settled_at: number | null;
}

export interface MemberProfilesTable {
  member_id: string;
  bio: string;
  skills: string;
  projects: string;
  /** `hidden` (never in the directory), `members` (listed). */
  visibility: string;
  show_email: number;
  updated_at: number;
}

export interface ActivityTable {
  id: string;
  member_id: string;
  at: number;
  operation: string;
  surface: string;
  token_prefix: string;
  status: number;
  outcome: string;
  /** What the call touched (`event:<url>`, `booking:<id>`, `highlight:<id>`), or null. */
  target: string | null;
}

/** Calls and refusals of one UTC day (its number since the epoch), surface and operation. */
export interface ActivityDaysTable {
  day: number;
  surface: string;
  operation: string;
  calls: number;
  refusals: number;
}

/** A named counter the dashboard reads (storage/rollups.ts names them). */
export interface TalliesTable {
  key: string;
  count: number;
}

/** How many live tokens a member holds (a row with 0 is a member who held one). */
export interface TokenHoldersTable {
  member_id: string;
  live: number;
}

export interface DonationsTable {
  id: string;
  donor_name: string;
  amount_cents: number;
  message: string | null;
  public: number;
  source: string;
  created_at: number;
  /** x402 donations (migration 0013); null on rows recorded before (seeded, imported). */
  member_id?: ColumnType<string | null, string | null | undefined, string | null>;
  network?: ColumnType<string | null, string | null | undefined, string | null>;
  asset?: ColumnType<string | null, string | null | undefined, string | null>;
  /** The amount in the token's smallest unit, as text (it can pass 2^53). */
  amount_atomic?: ColumnType<string | null, string | null | undefined, string | null>;
  payer?: ColumnType<string | null, string | null | undefined, string | null>;
  /** The settlement's transaction hash; null when a reconciliation found the payment settled but not its hash. */
  transaction_ref?: ColumnType<string | null, string | null | undefined, string | null>;
  /** The payment_settlements key it was recorded from: unique, so one payment is one donation. */
  payment_key?: ColumnType<string | null, string | null | undefined, string | null>;
}

/** One x402 payment on its way from claimed to recorded (migration 0013). JSON columns hold text. */
export interface PaymentSettlementsTable {
  payment_key: string;
  state: 'settling' | 'recorded' | 'failed';
  payment: string;
  requirements: string;
  donation: string;
  attempts: number;
  /** Until then the instance that claimed it is still waiting on the facilitator; after, anyone may reconcile it. */
  lease_until: number;
  outcome: string | null;
  created_at: number;
  updated_at: number;
}

export interface ResourcesTable {
  id: string;
  kind: string;
  name: string;
  capacity: number;
  open_hours: string;
  bookable: number;
}

export interface CorpusDocumentsTable {
  id: string;
  source: string;
  title: string;
  authors: string;
  year: number | null;
  url: string | null;
  body: string;
  added_at: number;
  /** The path or URL it was read from (re-adding the same origin replaces it). */
  origin: string | null;
  /** SHA-256 of the bytes read: an unchanged file is not re-split. */
  content_hash: string | null;
  passage_count: number;
  /** Bumped on every replacement, so per-instance indexes (PostgreSQL) see what changed. */
  revision: number;
}

/** A retrievable piece of a corpus document; it keeps the document's title and its own section. */
export interface CorpusPassagesTable {
  id: Generated<number>;
  document_id: string;
  position: number;
  source: string;
  title: string;
  section: string;
  body: string;
}

/** URLs an operator queued to read before ingesting (operator-reviewed ingest). */
export interface CorpusQueueTable {
  id: string;
  url: string;
  source: string;
  note: string | null;
  status: string;
  created_at: number;
  decided_at: number | null;
  document_id: string | null;
}

export interface EventLogHeadsTable {
  recipient_id: string;
  last_id: number;
}

export interface EventLogTable {
  recipient_id: string;
  id: number;
  type: string;
  at: number;
  actor: string;
  target: string;
  payload: string;
  actions: string;
}

export interface TierRequestsTable {
  id: string;
  member_id: string;
  tier: string;
  note: string | null;
  status: string;
  created_at: number;
  decided_at: number | null;
  decided_by: string | null;
  granted_tier: string | null;
  reason: string | null;
}

/** A member's proven account on the code host; the host's token is never kept. */
export interface VcsLinksTable {
  member_id: string;
  host_user_id: string;
  username: string;
  /** `oauth` or `token` (a personal access token checked once against the host). */
  source: string;
  verified_at: number;
  opted_in: number;
  /** Commits in private repositories counted: stays 0 while no member token is kept (docs/decisions.md). */
  private_counting: number;
  updated_at: number;
}

/** One row per ISO week the refresh job has run for. */
export interface LeaderboardWeeksTable {
  /** Monday 00:00 UTC, epoch milliseconds. */
  week_start: number;
  generated_at: number;
  /** Members whose count the last run could not refresh (their previous count stays). */
  failed: number;
}

export interface LeaderboardCountsTable {
  week_start: number;
  member_id: string;
  commits: number;
  rank: number;
  counted_at: number;
}

/** Content tables: text is Markdown as the operator wrote it; dates are `YYYY-MM-DD`. */
export interface NewsletterIssuesTable {
  slug: string;
  title: string;
  date: string;
  summary: string | null;
  intro: string;
  source_hash: string;
  updated_at: number;
}

export interface NewsletterStoriesTable {
  issue_slug: string;
  story_id: string;
  position: number;
  title: string;
  body: string;
}

export interface PresentationsTable {
  number: number;
  title: string;
  date: string;
  speaker: string | null;
  summary: string | null;
  slides_url: string | null;
  video_url: string | null;
  notes: string;
  source_hash: string;
  updated_at: number;
}

export interface NewsLinksTable {
  id: string;
  title: string;
  url: string;
  date: string;
  note: string;
  source_hash: string;
  updated_at: number;
}

export interface ContentPagesTable {
  name: string;
  /** The front matter, as JSON. */
  fields: string;
  body: string;
  source_hash: string;
  updated_at: number;
}

export interface Schema {
  settings: SettingsTable;
  members: MembersTable;
  tokens: TokensTable & TokenSigningColumns;
  signature_nonces: SignatureNoncesTable;
  sessions: SessionsTable;
  sign_in_links: SignInLinksTable;
  oidc_logins: OidcLoginsTable;
  operator_audit: OperatorAuditTable;
  device_grants: DeviceGrantsTable;
  oauth_clients: OAuthClientsTable;
  oauth_authorizations: OAuthAuthorizationsTable;
  counters: CountersTable;
  idempotency: IdempotencyTable;
  highlights: HighlightsTable;
  feedback: FeedbackTable;
  events: EventsTable;
  resources: ResourcesTable;
  corpus_documents: CorpusDocumentsTable;
  corpus_passages: CorpusPassagesTable;
  corpus_queue: CorpusQueueTable;
  event_log_heads: EventLogHeadsTable;
  event_log: EventLogTable;
  tier_requests: TierRequestsTable;
  rsvps: RsvpsTable;
  event_requests: EventRequestsTable;
  bookings: BookingsTable;
  member_profiles: MemberProfilesTable;
  activity: ActivityTable;
  activity_days: ActivityDaysTable;
  tallies: TalliesTable;
  token_holders: TokenHoldersTable;
  donations: DonationsTable;
  payment_settlements: PaymentSettlementsTable;
  vcs_links: VcsLinksTable;
  leaderboard_weeks: LeaderboardWeeksTable;
  leaderboard_counts: LeaderboardCountsTable;
  newsletter_issues: NewsletterIssuesTable;
  newsletter_stories: NewsletterStoriesTable;
  presentations: PresentationsTable;
  news_links: NewsLinksTable;
  content_pages: ContentPagesTable;
  a2a_tasks: A2aTasksTable;
}

export type Db = Kysely<Schema>;
/** Either the database or an open transaction: repositories accept both. */
export type Executor = Kysely<Schema> | Transaction<Schema>;
