import type { Kysely, Transaction } from 'kysely';

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

export interface SignInLinksTable {
  id_hash: string;
  email: string;
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

export interface Schema {
  settings: SettingsTable;
  members: MembersTable;
  tokens: TokensTable;
  sessions: SessionsTable;
  sign_in_links: SignInLinksTable;
  operator_audit: OperatorAuditTable;
  device_grants: DeviceGrantsTable;
  counters: CountersTable;
  idempotency: IdempotencyTable;
  highlights: HighlightsTable;
  feedback: FeedbackTable;
  events: EventsTable;
  resources: ResourcesTable;
  corpus_documents: CorpusDocumentsTable;
  event_log_heads: EventLogHeadsTable;
  event_log: EventLogTable;
  tier_requests: TierRequestsTable;
}

export type Db = Kysely<Schema>;
/** Either the database or an open transaction: repositories accept both. */
export type Executor = Kysely<Schema> | Transaction<Schema>;
