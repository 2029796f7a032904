// Every setting the service reads, declared once: its variable, where it lands in the config, what it
// accepts, its default, whether it is secret, and what it means. src/config.ts loads it and derives the
// Config type from it; `npm run docs` renders docs/configuration.md from it. Settings are read in the
// order written here, so a default derived from another setting comes after that setting.
import { CONNECTIONS_SCHEMA } from './connections.ts';
import { EVENTS_SETTINGS } from './events.ts';
import { CODE_HOST_SCHEMA, OIDC_SCHEMA } from './integrations.ts';
import { LIMITS_SCHEMA } from './limits.ts';
import { PAYMENTS_SCHEMA } from './payments.ts';
import { PRODUCTION_SCHEMA } from './production.ts';
import { RESEARCH_SCHEMA } from './research.ts';
import { RETENTION_SCHEMA } from './retention.ts';
import { durationMs, flag, integer, oneOf, optional, originList, refuse, setting, text } from './settings.ts';

const IP_HASH_SECRET = {
  env: 'IP_HASH_SECRET',
  group: 'storage',
  secret: true,
  trim: true,
  accepts: 'string of 32 characters or more',
  defaultText: 'unset',
  description:
    "The key feedback tickets hash the sender's address with (HMAC-SHA256), so that tickets from one " +
    'address can be grouped without the address being stored; it is never written to the database. ' +
    'Give every instance the same value (`openssl rand -hex 32`). Unset: each process makes a random ' +
    "key at start, and hashes group only within one process's lifetime. See " +
    '[deployment](deployment.md#retention-of-personal-data).',
} as const;

const CORS_ORIGINS = {
  env: 'CORS_ALLOWED_ORIGINS',
  group: 'server',
  trim: true,
  accepts: 'comma-separated origins (`https://host[:port]`)',
  defaultText: 'empty: no other origin',
  description:
    'Web origins whose pages may call the API (REST under `/api/`, MCP at `/api/mcp`, A2A at ' +
    '`/api/a2a`) from a browser with a bearer token: their preflight is answered and the answers carry ' +
    '`Access-Control-Allow-Origin` for them. Credentials come only from the `Authorization` header: no ' +
    '`Access-Control-Allow-Credentials`, and a session cookie on a request from such an origin is ' +
    'ignored. Every origin is named exactly (scheme, host, port), `*` is refused. Any other foreign ' +
    'origin stays refused (MCP answers it 403, against DNS rebinding). The public documents ' +
    '(`/.well-known/*`, `/openapi.json`, `/llms.txt`, …) are readable from any origin whatever this says. ' +
    'See [deployment](deployment.md#browser-agents-on-other-origins).',
} as const;

export const CONFIG_SCHEMA = {
  port: integer({ env: 'PORT', group: 'server', default: 3000, min: 0, description: 'Listening port.' }),
  host: text({
    env: 'HOST',
    group: 'server',
    default: '127.0.0.1',
    description: 'Listening address; `0.0.0.0` to accept connections from other hosts.',
  }),
  publicUrl: setting<string, { host: string; port: number }>(
    {
      env: 'PUBLIC_URL',
      group: 'server',
      accepts: 'URL (a trailing `/` is dropped)',
      defaultText: '`http://HOST:PORT` (`localhost` for `0.0.0.0` and `::`)',
      description:
        'The address agents and humans use. Every absolute URL the service prints (verify URLs, poll ' +
        'URLs, `Location`, discovery documents) is built from it. Set it behind a proxy.',
    },
    (raw, { host, port }) => {
      const publicHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
      return (raw ?? `http://${publicHost}:${port}`).replace(/\/+$/, '');
    },
  ),
  corsOrigins: setting<readonly string[]>(CORS_ORIGINS, (raw) => originList(CORS_ORIGINS, raw)),
  communityName: text({
    env: 'COMMUNITY_NAME',
    group: 'server',
    default: 'agent-commons',
    trim: true,
    accepts: 'text',
    description:
      "The community's name: the pages' header and titles, the home page's heading, the sign-in " +
      'mail and the consent and approval pages say it.',
  }),
  communityLogoUrl: setting<string | undefined>(
    {
      env: 'COMMUNITY_LOGO_URL',
      group: 'server',
      trim: true,
      accepts: 'https URL, or a path on this site',
      defaultText: 'unset',
      description:
        "The community's logo, shown beside its name in every page's header (about 32 px high; the " +
        'pages may load images from this site and from https hosts). Unset: the name alone.',
    },
    (raw) => {
      if (raw === undefined) return undefined;
      if (raw.startsWith('https://') ? URL.canParse(raw) : /^\/(?![/\\])/.test(raw)) return raw;
      throw refuse(
        { env: 'COMMUNITY_LOGO_URL', group: 'server', description: '' },
        'an https URL or a path on this site',
        raw,
      );
    },
  ),
  logLevel: text({
    env: 'LOG_LEVEL',
    group: 'server',
    default: 'info',
    accepts: 'pino level',
    description: 'pino level. Logs carry method and path only: never query strings, headers or bodies.',
  }),
  logFormat: oneOf({
    env: 'LOG_FORMAT',
    group: 'server',
    values: ['auto', 'pretty', 'json'],
    default: 'auto',
    description:
      'The log of `serve`: one line per request at most. `auto`: human-readable (pino-pretty) when ' +
      'standard output is a terminal, JSON lines otherwise; `pretty` or `json` either way.',
  }),
  ...CONNECTIONS_SCHEMA,
  defaultBodyLimit: integer({
    env: 'BODY_LIMIT_BYTES',
    group: 'server',
    default: 64 * 1024,
    min: 1024,
    unit: 'bytes, integer',
    description: 'Body cap of operations that declare none of their own.',
  }),
  checkOutputSchemas: flag({
    env: 'CHECK_OUTPUT_SCHEMAS',
    group: 'server',
    default: false,
    description:
      "Check every answer against its operation's output schema; a mismatch is answered 500 and logged " +
      'with the operation and field. The test suites turn it on, so a body cannot drift from what ' +
      'OpenAPI, MCP and A2A advertise; it costs one validation per call.',
  }),
  seedDemo: flag({
    env: 'SEED_DEMO',
    group: 'server',
    default: true,
    description: 'Seed the demo community when the database has no members. Set `false` in production.',
  }),
  memoryTrimIdleMs: durationMs({
    env: 'MEMORY_TRIM_IDLE_MS',
    group: 'server',
    default: 30_000,
    min: 0,
    description:
      'Give idle memory back to the system once this long has passed with the process idle, once per ' +
      'busy spell (the start counts as one): one memory-reducing collection of tens of milliseconds. ' +
      'An idle instance then holds about 120 MB instead of 180; a busy one is never trimmed, and ' +
      'requests right after a trim cost 10-20 % more CPU until the young generation has ' +
      'grown back. `0`: never. See [deployment](deployment.md#memory).',
  }),
  tiersFile: optional({
    env: 'TIERS_FILE',
    group: 'server',
    accepts: 'file path',
    description:
      'JSON file with the tier ladder: `[{"name","adds":[scopes],"selfRequestable"}]`, lowest first. ' +
      'Default ladder [below](#tiers-and-scopes).',
  }),
  databaseUrl: text({
    env: 'DATABASE_URL',
    group: 'storage',
    default: 'sqlite:./data/agent.db',
    secret: true,
    accepts: '`sqlite:<path>` or `postgres://…` URL',
    description:
      '`sqlite:<path>` for the embedded database, or `postgres://user:pass@host:port/db`; on the ' +
      "database's own host, its Unix socket: `postgres://user@%2Fvar%2Frun%2Fpostgresql/db`.",
  }),
  databaseTimeouts: {
    connectTimeoutMs: durationMs({
      env: 'DATABASE_CONNECT_TIMEOUT_MS',
      group: 'storage',
      default: 3000,
      min: 0,
      description:
        'PostgreSQL: how long a request waits for a connection (a new one, or a free one from the pool ' +
        'of 10) before it is answered `503 service_unavailable`. `0`: no bound. See ' +
        '[deployment](deployment.md#when-postgresql-or-redis-is-away).',
    }),
    statementTimeoutMs: durationMs({
      env: 'DATABASE_STATEMENT_TIMEOUT_MS',
      group: 'storage',
      default: 15_000,
      min: 0,
      description:
        'PostgreSQL: the server cancels a statement that runs longer (`statement_timeout`), and the ' +
        'client gives up on one unanswered for a second more (a server that went silent); the request ' +
        "is answered 503. A write's lock waits, counted from its arrival, end a tenth earlier (at most " +
        'a second): `503 database_busy` (see [deployment](deployment.md#when-postgresql-or-redis-is-away)). ' +
        'Migrations run without it. `0`: no bound.',
    }),
  },
  redisUrl: optional({
    env: 'REDIS_URL',
    group: 'storage',
    secret: true,
    accepts: 'URL',
    description:
      'Keep per-minute rate counters in Redis (shared by every instance). While Redis is unreachable ' +
      'they are counted in the database, as without Redis (in memory on the embedded engine); nothing ' +
      'fails for it. See [deployment](deployment.md).',
  }),
  redisKeyPrefix: text({
    env: 'REDIS_KEY_PREFIX',
    group: 'storage',
    default: 'agent-commons',
    description: "Namespace of this deployment's keys in a shared Redis.",
  }),
  ipHashSecret: setting<string | undefined>(IP_HASH_SECRET, (raw) => {
    if (raw !== undefined && raw.length < 32) throw refuse(IP_HASH_SECRET, 'at least 32 characters');
    return raw;
  }),
  openSignup: flag({
    env: 'OPEN_SIGNUP',
    group: 'sign-in',
    default: true,
    description:
      'The first email sign-in of an unknown address creates a `public` member. `false`: only members ' +
      'an operator created (invited) can sign in; others see the same "check your mail" page and get ' +
      'no mail.',
  }),
  smtpUrl: optional({
    env: 'SMTP_URL',
    group: 'sign-in',
    secret: true,
    accepts: 'URL',
    description:
      'nodemailer transport URL (`smtp://user:pass@host:587`, `smtps://…`) for sign-in mail. Unset on a ' +
      'local server (`HOST` and `PUBLIC_URL` on loopback): the mail goes to an in-memory development ' +
      'outbox that only opens with the key printed at start (`sign-in: … /dev/outbox?key=…`; ' +
      '`agent-commons outbox` prints it again). Unset on ' +
      'a public deployment: email links are off when OIDC is set, and the server refuses to start when ' +
      'it is not ([deployment](deployment.md)).',
  }),
  mailFrom: text({
    env: 'MAIL_FROM',
    group: 'sign-in',
    default: 'agent-commons <no-reply@localhost>',
    accepts: 'mail address',
    description: 'Sender of sign-in mail.',
  }),
  oauthClientDocumentsFromPrivateAddresses: flag({
    env: 'OAUTH_CLIENT_DOCUMENTS_ALLOW_PRIVATE',
    group: 'sign-in',
    default: false,
    description:
      'An MCP host whose OAuth `client_id` is the URL of its client ID metadata document may have it on ' +
      'a loopback, private or link-local address, and over http on loopback: for development and tests. ' +
      'Off: such a document is refused before any connection.',
  }),
  oidc: OIDC_SCHEMA,
  limits: LIMITS_SCHEMA,
  ...EVENTS_SETTINGS,
  codeHost: CODE_HOST_SCHEMA,
  leaderboardRefreshMinutes: integer({
    env: 'LEADERBOARD_REFRESH_MINUTES',
    group: 'code-host',
    default: 60,
    min: 0,
    unit: 'minutes, integer',
    description:
      'How often `serve` recounts the week (first run 5 s after start; of several instances on one ' +
      'database only one runs each interval); `0` turns the timer off (run `agent-commons leaderboard ' +
      'refresh` from cron instead). The public board says `stale` once the last run is older than two ' +
      'intervals.',
  }),
  research: RESEARCH_SCHEMA,
  payments: PAYMENTS_SCHEMA,
  retention: RETENTION_SCHEMA,
  ...PRODUCTION_SCHEMA,
};
