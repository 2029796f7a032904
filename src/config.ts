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
  /** Feedback tickets per IP per hour (spec §8). */
  feedbackPerHour: number;
  /** New highlight submissions per token per UTC day (spec §8). */
  highlightsPerDay: number;
}

export interface Config {
  port: number;
  host: string;
  /** `sqlite:<path>` (embedded, default) or `postgres://…`. */
  databaseUrl: string;
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
  /** Anyone may sign in by email and becomes a `public` member; off: only invited emails (OPEN_SIGNUP). */
  openSignup: boolean;
  /** nodemailer transport URL for sign-in mail (SMTP_URL); absent: the dev outbox page and the log. */
  smtpUrl?: string;
  /** Sender of sign-in mail (MAIL_FROM). */
  mailFrom: string;
}

export const DEFAULT_LIMITS: Limits = {
  anonymousPerMinute: 120,
  tokenPerMinute: 1200,
  signupStartPerHour: 30,
  feedbackPerHour: 10,
  highlightsPerDay: 3,
};

const LIMIT_ENV: Record<keyof Limits, string> = {
  anonymousPerMinute: 'LIMIT_ANONYMOUS_PER_MINUTE',
  tokenPerMinute: 'LIMIT_TOKEN_PER_MINUTE',
  signupStartPerHour: 'LIMIT_SIGNUP_START_PER_HOUR',
  feedbackPerHour: 'LIMIT_FEEDBACK_PER_HOUR',
  highlightsPerDay: 'LIMIT_HIGHLIGHTS_PER_DAY',
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
    publicUrl: (env.PUBLIC_URL || `http://${publicHost}:${port}`).replace(/\/+$/, ''),
    seedDemo: flag(env, 'SEED_DEMO', true),
    logLevel: env.LOG_LEVEL || 'info',
    trustProxy: flag(env, 'TRUST_PROXY', false),
    redisUrl: env.REDIS_URL || undefined,
    redisKeyPrefix: env.REDIS_KEY_PREFIX || 'agent-commons',
    tiersFile: env.TIERS_FILE || undefined,
    limits,
    defaultBodyLimit: integer(env, 'BODY_LIMIT_BYTES', 64 * 1024, 1024),
    openSignup: flag(env, 'OPEN_SIGNUP', true),
    smtpUrl: env.SMTP_URL || undefined,
    mailFrom: env.MAIL_FROM || 'agent-commons <no-reply@localhost>',
    ...overrides,
  };
  return config;
}
