/**
 * Every setting the service reads, parsed once at start. Each key is documented beside its default;
 * docs/configuration.md lists them for operators.
 */
export interface Limits {
  /** Requests per 60 s per IP for anonymous callers and for 401/403 rejections (spec §8). */
  anonymousPerMinute: number;
  /** Requests per 60 s per token for authenticated callers (not set by the spec). */
  tokenPerMinute: number;
  /** Device-flow starts per IP per hour (spec §8). */
  signupStartPerHour: number;
  /** Device codes entered on the approval page per 60 s, per member and per IP (guessing codes). */
  codeEntriesPerMinute: number;
  /** Feedback tickets per IP per hour (spec §8). */
  feedbackPerHour: number;
  /** New highlight submissions per token per UTC day (spec §8). */
  highlightsPerDay: number;
  /** RSVPs per token per UTC day (reference §11). */
  rsvpsPerDay: number;
  /** Booking requests per token per UTC day (reference §11). */
  bookingsPerDay: number;
  /** Event proposals per member per UTC day. */
  eventRequestsPerDay: number;
  /** Leaderboard opt-in changes per member per hour (not set by the spec). */
  leaderboardOptInPerHour: number;
  /** Confirmed operator decisions over MCP/A2A per token per UTC day (reference §11). */
  operatorMutationsPerDay: number;
  /** Research queries per member per hour, shared by all the member's tokens and sessions (spec §8). */
  researchPerHour: number;
}

export const MODEL_CLASSES = ['small', 'medium', 'large'] as const;
export type ModelClass = (typeof MODEL_CLASSES)[number];

/** The language model research synthesis calls; absent provider: the offline extractive synthesizer. */
export interface ResearchConfig {
  /** RESEARCH_PROVIDER: `openai` (any OpenAI-compatible chat-completions API), `anthropic`, or `none`. */
  provider: 'none' | 'openai' | 'anthropic';
  /** RESEARCH_BASE_URL: the API base (default the vendor's public one; set it for a proxy or a local server). */
  baseUrl: string;
  /** RESEARCH_API_KEY. */
  apiKey?: string;
  /** RESEARCH_MODEL_SMALL / _MEDIUM / _LARGE: the provider's model identifier for each class. */
  models: Record<ModelClass, string>;
  /** RESEARCH_TIMEOUT_MS: a provider call gives up after this long (504). */
  timeoutMs: number;
  /** RESEARCH_MAX_TOKENS: the longest answer asked of the provider. */
  maxTokens: number;
  /**
   * CORPUS_ALLOW_PRIVATE_URLS: corpus URLs may point at loopback, private and link-local addresses
   * (an intranet wiki, say). Off by default: a queued URL from outside must not reach the internal network.
   */
  allowPrivateUrls: boolean;
  /** CORPUS_MAX_BYTES: the largest document fetched from a URL. */
  maxDocumentBytes: number;
}

/** The GitHub-compatible code host members link for the leaderboard (GitHub, GitHub Enterprise, Gitea, Forgejo). */
export interface CodeHostConfig {
  /** Where people sign in: OAuth authorize and token exchange (VCS_WEB_URL). */
  webUrl: string;
  /** The REST API base, path included (VCS_API_URL; `https://ghe.example/api/v3` on Enterprise). */
  apiUrl: string;
  /** OAuth app credentials; linking through OAuth is offered only when both are set. */
  clientId?: string;
  clientSecret?: string;
  /** The service's own token for the counting job (VCS_API_TOKEN): a higher search rate limit. */
  apiToken?: string;
  /** Every call to the host gives up after this long (VCS_TIMEOUT_MS). */
  timeoutMs: number;
}

export interface Config {
  port: number;
  host: string;
  /** `sqlite:<path>` (embedded, default) or `postgres://…`. */
  databaseUrl: string;
  /**
   * PostgreSQL only: how long a request may wait for a connection (DATABASE_CONNECT_TIMEOUT_MS) and
   * for one statement (DATABASE_STATEMENT_TIMEOUT_MS) before it is answered 503; 0 turns a bound off.
   */
  databaseTimeouts: { connectTimeoutMs: number; statementTimeoutMs: number };
  /** The address agents and humans use to reach the service; every absolute URL is built from it. */
  publicUrl: string;
  /** Seed the demo community when the database has no members yet. */
  seedDemo: boolean;
  logLevel: string;
  /** Trust X-Forwarded-For from a reverse proxy when reading the client IP. */
  trustProxy: boolean;
  /** Optional Redis for per-minute rate counters shared by several instances. */
  redisUrl?: string;
  /** Namespace of this deployment's keys in a shared Redis. */
  redisKeyPrefix: string;
  /** Optional JSON file with the operator's tier ladder. */
  tiersFile?: string;
  limits: Limits;
  /** Largest request body accepted by operations that declare no cap of their own. */
  defaultBodyLimit: number;
  /**
   * CHECK_OUTPUT_SCHEMAS: check every answer against its operation's output schema (a mismatch is a
   * 500). On in the test suites; it costs a validation per call, so it is off by default.
   */
  checkOutputSchemas: boolean;
  /** Anyone may sign in by email and becomes a `public` member; off: only invited emails (OPEN_SIGNUP). */
  openSignup: boolean;
  /** nodemailer transport URL for sign-in mail (SMTP_URL); absent: the dev outbox page and the log. */
  smtpUrl?: string;
  /** Sender of sign-in mail (MAIL_FROM). */
  mailFrom: string;
  /** The event platform's iCalendar feed: an http(s) URL or a local .ics path (EVENTS_FEED). */
  eventsFeed?: string;
  /** Minutes between feed refreshes (EVENTS_REFRESH_MINUTES). */
  eventsRefreshMinutes: number;
  /** The platform's accepted event-URL hosts, canonical first (EVENT_URL_HOSTS, comma-separated). */
  eventUrlHosts: string[];
  /** Where queued RSVPs are delivered (RSVP_WEBHOOK_URL); absent: recorded and confirmed locally. */
  rsvpWebhookUrl?: string;
  /** Seconds between worker passes over queued RSVPs and bookings (WORKER_INTERVAL_SECONDS). */
  workerIntervalSeconds: number;
  /** How long a worker holds a claimed job before another may take it over (WORKER_LEASE_SECONDS). */
  workerLeaseSeconds: number;
  /** Start the queue workers inside `serve` (RUN_WORKERS); off for instances that only serve. */
  runWorkers: boolean;
  codeHost: CodeHostConfig;
  /** How often `serve` recounts the week's commits (LEADERBOARD_REFRESH_MINUTES); 0 turns the timer off. */
  leaderboardRefreshMinutes: number;
  /** OpenID Connect sign-in beside the mailed link; absent unless OIDC_ISSUER and OIDC_CLIENT_ID are set. */
  oidc?: OidcConfig;
  research: ResearchConfig;
}

export interface OidcConfig {
  /** Issuer URL (OIDC_ISSUER); its metadata is read from `<issuer>/.well-known/openid-configuration`. */
  issuer: string;
  /** Client id registered at the provider (OIDC_CLIENT_ID), with the redirect URI `<PUBLIC_URL>/signin/oidc/callback`. */
  clientId: string;
  /** Client secret (OIDC_CLIENT_SECRET), sent with HTTP Basic; absent for a public client (PKCE only). */
  clientSecret?: string;
  /** Text of the sign-in button (OIDC_LABEL). */
  label: string;
}

export const DEFAULT_LIMITS: Limits = {
  anonymousPerMinute: 120,
  tokenPerMinute: 1200,
  signupStartPerHour: 30,
  codeEntriesPerMinute: 10,
  feedbackPerHour: 10,
  highlightsPerDay: 3,
  rsvpsPerDay: 10,
  bookingsPerDay: 10,
  eventRequestsPerDay: 3,
  leaderboardOptInPerHour: 30,
  operatorMutationsPerDay: 20,
  researchPerHour: 60,
};

const LIMIT_ENV: Record<keyof Limits, string> = {
  anonymousPerMinute: 'LIMIT_ANONYMOUS_PER_MINUTE',
  tokenPerMinute: 'LIMIT_TOKEN_PER_MINUTE',
  signupStartPerHour: 'LIMIT_SIGNUP_START_PER_HOUR',
  codeEntriesPerMinute: 'LIMIT_CODE_ENTRIES_PER_MINUTE',
  feedbackPerHour: 'LIMIT_FEEDBACK_PER_HOUR',
  highlightsPerDay: 'LIMIT_HIGHLIGHTS_PER_DAY',
  rsvpsPerDay: 'LIMIT_RSVPS_PER_DAY',
  bookingsPerDay: 'LIMIT_BOOKINGS_PER_DAY',
  eventRequestsPerDay: 'LIMIT_EVENT_REQUESTS_PER_DAY',
  leaderboardOptInPerHour: 'LIMIT_LEADERBOARD_OPTIN_PER_HOUR',
  operatorMutationsPerDay: 'LIMIT_OPERATOR_MUTATIONS_PER_DAY',
  researchPerHour: 'LIMIT_RESEARCH_PER_HOUR',
};

type Env = Record<string, string | undefined>;

function integer(env: Env, key: string, fallback: number, min = 0): number {
  const raw = env[key];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min)
    throw new Error(`${key} must be an integer >= ${min} (got "${raw}")`);
  return value;
}

function flag(env: Env, key: string, fallback: boolean): boolean {
  const raw = env[key]?.toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new Error(`${key} must be true or false (got "${env[key]}")`);
}

function hostList(raw: string): string[] {
  const hosts = raw
    .split(',')
    .map((host) => host.trim().toLowerCase())
    .filter(Boolean);
  if (hosts.length === 0) throw new Error('EVENT_URL_HOSTS must name at least one host');
  return hosts;
}

/** OIDC is on only when both the issuer and the client id are set; half a configuration is an error. */
function oidcConfig(env: Env): OidcConfig | undefined {
  const issuer = env.OIDC_ISSUER?.trim();
  const clientId = env.OIDC_CLIENT_ID?.trim();
  if (!issuer && !clientId) return undefined;
  if (!issuer || !clientId) throw new Error('OIDC_ISSUER and OIDC_CLIENT_ID must be set together');
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new Error(`OIDC_ISSUER must be a URL (got "${issuer}")`);
  }
  if (url.protocol !== 'https:' && !isLoopback(url.hostname))
    throw new Error(`OIDC_ISSUER must be https outside localhost (got "${issuer}")`);
  return {
    issuer,
    clientId,
    clientSecret: env.OIDC_CLIENT_SECRET || undefined,
    label: env.OIDC_LABEL?.trim() || 'Sign in with single sign-on',
  };
}

export function isLoopback(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return host === 'localhost' || host === '[::1]' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** An http(s) base address without a trailing slash (paths are appended to it, keeping its own path). */
function baseUrl(env: Env, key: string, fallback: string): string {
  const raw = env[key] || fallback;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new Error(`${key} must be an http(s) URL (got "${raw}")`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    throw new Error(`${key} must be an http(s) URL (got "${raw}")`);
  return raw.replace(/\/+$/, '');
}

const PROVIDER_BASE_URLS = {
  none: 'http://127.0.0.1',
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
};

/** A provider needs a model identifier for every class; without one, the classes name the offline synthesizer. */
function researchConfig(env: Env): ResearchConfig {
  const provider = (env.RESEARCH_PROVIDER || 'none').toLowerCase();
  if (provider !== 'none' && provider !== 'openai' && provider !== 'anthropic')
    throw new Error(`RESEARCH_PROVIDER must be none, openai or anthropic (got "${env.RESEARCH_PROVIDER}")`);
  const models = {} as Record<ModelClass, string>;
  for (const modelClass of MODEL_CLASSES) {
    const key = `RESEARCH_MODEL_${modelClass.toUpperCase()}`;
    const value = env[key]?.trim();
    if (provider !== 'none' && !value)
      throw new Error(`${key} must be set when RESEARCH_PROVIDER is ${provider}`);
    models[modelClass] = value || `extractive-${modelClass}`;
  }
  return {
    provider,
    baseUrl: baseUrl(env, 'RESEARCH_BASE_URL', PROVIDER_BASE_URLS[provider]),
    apiKey: env.RESEARCH_API_KEY || undefined,
    models,
    timeoutMs: integer(env, 'RESEARCH_TIMEOUT_MS', 30_000, 100),
    maxTokens: integer(env, 'RESEARCH_MAX_TOKENS', 600, 16),
    allowPrivateUrls: flag(env, 'CORPUS_ALLOW_PRIVATE_URLS', false),
    maxDocumentBytes: integer(env, 'CORPUS_MAX_BYTES', 50 * 1024 * 1024, 1024),
  };
}

export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const port = integer(env, 'PORT', 3000);
  const host = env.HOST || '127.0.0.1';
  const limits = { ...DEFAULT_LIMITS };
  for (const key of Object.keys(LIMIT_ENV) as (keyof Limits)[]) {
    limits[key] = integer(env, LIMIT_ENV[key], DEFAULT_LIMITS[key], 1);
  }
  const publicHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  const config: Config = {
    port,
    host,
    databaseUrl: env.DATABASE_URL || 'sqlite:./data/agent.db',
    databaseTimeouts: {
      connectTimeoutMs: integer(env, 'DATABASE_CONNECT_TIMEOUT_MS', 3000),
      statementTimeoutMs: integer(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 15_000),
    },
    publicUrl: (env.PUBLIC_URL || `http://${publicHost}:${port}`).replace(/\/+$/, ''),
    seedDemo: flag(env, 'SEED_DEMO', true),
    logLevel: env.LOG_LEVEL || 'info',
    trustProxy: flag(env, 'TRUST_PROXY', false),
    redisUrl: env.REDIS_URL || undefined,
    redisKeyPrefix: env.REDIS_KEY_PREFIX || 'agent-commons',
    tiersFile: env.TIERS_FILE || undefined,
    limits,
    defaultBodyLimit: integer(env, 'BODY_LIMIT_BYTES', 64 * 1024, 1024),
    checkOutputSchemas: flag(env, 'CHECK_OUTPUT_SCHEMAS', false),
    openSignup: flag(env, 'OPEN_SIGNUP', true),
    smtpUrl: env.SMTP_URL || undefined,
    mailFrom: env.MAIL_FROM || 'agent-commons <no-reply@localhost>',
    eventsFeed: env.EVENTS_FEED || undefined,
    eventsRefreshMinutes: integer(env, 'EVENTS_REFRESH_MINUTES', 15, 1),
    eventUrlHosts: hostList(env.EVENT_URL_HOSTS || 'lu.ma,luma.com'),
    rsvpWebhookUrl: env.RSVP_WEBHOOK_URL || undefined,
    workerIntervalSeconds: integer(env, 'WORKER_INTERVAL_SECONDS', 5, 1),
    workerLeaseSeconds: integer(env, 'WORKER_LEASE_SECONDS', 60, 1),
    runWorkers: flag(env, 'RUN_WORKERS', true),
    oidc: oidcConfig(env),
    codeHost: {
      webUrl: baseUrl(env, 'VCS_WEB_URL', 'https://github.com'),
      apiUrl: baseUrl(env, 'VCS_API_URL', 'https://api.github.com'),
      clientId: env.VCS_CLIENT_ID || undefined,
      clientSecret: env.VCS_CLIENT_SECRET || undefined,
      apiToken: env.VCS_API_TOKEN || undefined,
      timeoutMs: integer(env, 'VCS_TIMEOUT_MS', 10_000, 100),
    },
    leaderboardRefreshMinutes: integer(env, 'LEADERBOARD_REFRESH_MINUTES', 60),
    research: researchConfig(env),
    ...overrides,
  };
  return config;
}
