import { Writable } from 'node:stream';
import fc from 'fast-check';
import { ALL_SCOPES } from '../../src/domain/access/scopes.ts';
import { createSession, SESSION_COOKIE } from '../../src/domain/auth/sessions.ts';
import { seedDemoCommunity } from '../../src/domain/demo/seed.ts';
import { OPERATIONS } from '../../src/operations/registry.ts';
import type { Operation } from '../../src/operations/types.ts';
import { startTestApp, type TestApp } from './app.ts';
import type { EngineName } from './databases.ts';
import { story } from './highlight-story.ts';
import type { JsonSchema } from './json-schema.ts';

// Property-based fuzzing of every registry operation on every surface it is served on (REST, MCP
// tools/call, A2A tasks/send). Each input is a generated call: a near-valid input with some fields
// replaced by hostile values, or a hostile value as the whole input, sent with or without a
// credential (a bearer with every scope of an operator, a browser session, a sandbox bearer, a
// bearer nobody issued). The rule: no 5xx, no `internal` error inside an MCP or A2A reply, no
// answer slower than the request timeout, no log line at error level.

export type Surface = 'rest' | 'mcp' | 'a2a';
type Credential = 'none' | 'bearer' | 'session' | 'member-session' | 'sandbox' | 'unknown-bearer';

/** JSON text written as it is where a value goes: what JSON.stringify cannot write (1e400, 2^70, deep nesting). */
export class RawJson {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  toString(): string {
    return `RawJson(${this.text.length > 60 ? `${this.text.slice(0, 60)}… (${this.text.length} chars)` : this.text})`;
  }
}

/** JSON text of a generated value; RawJson pieces are written as they are. */
export function jsonText(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.entries(value).map(([key, item]) => `${JSON.stringify(key)}:${jsonText(item)}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

// ---- Hostile values ----------------------------------------------------------------------------

const ODD_PIECES = [
  '\u0000',
  '\u0001',
  '\b',
  '\t',
  '\n',
  '\r',
  '\u001b',
  '\u001f',
  '\u007f',
  '\u0085',
  '\u00a0',
  '\u200b',
  '\u200e',
  '\u2028',
  '\u2029',
  '\ufeff',
  '\ufffd',
  '\uffff',
  '\ud800',
  '\udfff',
  '😀',
  'é',
  'e\u0301',
  'İ',
  'ß',
  '%',
  '%00',
  '%zz',
  '&',
  '=',
  '+',
  '#',
  '?',
  '/',
  '\\',
  '"',
  "'",
  '<script>',
  '`',
  '$' + '{x}',
  '{}',
  '..',
  '*',
  '_',
  ',',
  ';',
  ' ',
  'null',
  'NaN',
  '-1',
  '0',
  ':',
  '__proto__',
  'constructor',
  "' OR 1=1 --",
  'https://',
  'fb_',
  'evr_',
];

/** One odd piece; NUL, which PostgreSQL's text refuses and SQLite's takes, comes up more often. */
const oddPiece: fc.Arbitrary<string> = fc.oneof(
  { weight: 1, arbitrary: fc.constant('\u0000') },
  { weight: 4, arbitrary: fc.constantFrom(...ODD_PIECES) },
);

const oddString: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      oddPiece,
      fc.string({ maxLength: 8 }),
      fc.string({ unit: 'binary', maxLength: 6 }),
      fc.string({ unit: 'grapheme', maxLength: 4 }),
    ),
    { maxLength: 10 },
  )
  .map((parts) => parts.join(''));

const LENGTHS = [16, 40, 41, 64, 65, 80, 81, 160, 161, 200, 201, 500, 501, 600, 601, 1000, 1001, 2000, 2001];
const hugeString: fc.Arbitrary<string> = fc
  .tuple(
    fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(...LENGTHS) },
      { weight: 1, arbitrary: fc.constantFrom(10_000, 70_000, 300_000, 1_100_000) },
    ),
    fc.constantFrom('x', 'é', '😀', '\u0000', 'a ', '%', '\ud800'),
  )
  .map(([length, piece]) => piece.repeat(Math.ceil(length / piece.length)));

const RAW_NUMBERS = [
  '1e400',
  '-1e400',
  '1e-400',
  '99999999999999999999',
  '-99999999999999999999',
  '9007199254740992',
  '9223372036854775807',
  '9223372036854775808',
  '-9223372036854775809',
  '123456789012345678901234567890.5',
  '1E3',
  '1.0',
  '0.0000001',
  '-0',
  '-0.0',
];

const oddNumber: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(
    0,
    -1,
    1,
    2 ** 31 - 1,
    2 ** 31,
    2 ** 32,
    2 ** 53 - 1,
    2 ** 53,
    2 ** 63,
    -(2 ** 63),
    1e20,
    1e308,
    -1e308,
    5e-324,
    0.5,
    1.5,
    -0.0001,
  ),
  fc.constantFrom(...RAW_NUMBERS).map((text) => new RawJson(text)),
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map((n) => new RawJson(n.toString())),
);

const deepValue: fc.Arbitrary<unknown> = fc
  .tuple(fc.constantFrom(50, 1000, 20_000, 200_000), fc.boolean())
  .map(([depth, arrays]) =>
    arrays
      ? new RawJson('['.repeat(depth) + ']'.repeat(depth))
      : new RawJson(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`),
  );

const oddObject: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    new RawJson('{"__proto__":{"admin":true}}'),
    new RawJson('{"constructor":{"prototype":{"admin":true}}}'),
    new RawJson('{"a":1,"a":2}'),
    {},
    { '': '' },
    [],
    [null],
  ),
  fc.dictionary(oddString, fc.oneof(oddString, oddNumber), { maxKeys: 3 }),
);

/** The value one time in eight, null otherwise (fc.option's `freq` is the chance of null, inverted). */
function rarely<T>(arbitrary: fc.Arbitrary<T>): fc.Arbitrary<T | null> {
  return fc.oneof({ weight: 7, arbitrary: fc.constant(null) }, { weight: 1, arbitrary });
}

/** A hostile value of any JSON type. */
export const hostile: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: oddString },
  { weight: 1, arbitrary: hugeString },
  { weight: 3, arbitrary: oddNumber },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.constantFrom(true, false, null) },
  { weight: 1, arbitrary: oddObject },
  { weight: 1, arbitrary: fc.array(fc.oneof(oddString, oddNumber), { maxLength: 4 }) },
  { weight: 1, arbitrary: deepValue },
);

// ---- Values from an operation's schema ---------------------------------------------------------

/** Strings the handlers know, for a field by its name (ids, slugs, tier names) or for any field. */
type Known = (field: string | undefined) => fc.Arbitrary<string>;

/**
 * A value the schema accepts, or near it: each place may instead get a hostile value, so most
 * inputs pass validation but one field, and the handlers run on what the schema lets through.
 */
function fromSchema(schema: JsonSchema, known: Known, depth = 0, field?: string): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 8, arbitrary: validFromSchema(schema, known, depth, field) },
    { weight: 1, arbitrary: hostile },
  );
}

function validFromSchema(
  schema: JsonSchema,
  known: Known,
  depth: number,
  field?: string,
): fc.Arbitrary<unknown> {
  if (depth > 6) return hostile;
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum?.length) return fc.constantFrom(...schema.enum);
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches?.length)
    return fc.oneof(...branches.map((branch) => fromSchema(branch, known, depth + 1, field)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string': {
      if (schema.format === 'date-time')
        return fc
          .date({ min: new Date('1970-01-01'), max: new Date('2200-01-01'), noInvalidDate: true })
          .map((date) => date.toISOString());
      if (schema.format === 'email') return fc.emailAddress();
      if (schema.format === 'uri') return fc.webUrl();
      const min = schema.minLength ?? 0;
      const max = schema.maxLength ?? 200;
      // Within the declared length, so the schema lets it through to the handler and storage.
      const fit = (text: string) => text.slice(0, max).padEnd(min, 'x');
      if (schema.pattern) {
        const pattern = new RegExp(schema.pattern, 'u');
        return fc.oneof(
          { weight: 3, arbitrary: known(field) },
          { weight: 2, arbitrary: fc.stringMatching(pattern).map(fit) },
        );
      }
      return fc.oneof(
        { weight: 5, arbitrary: known(field) },
        { weight: 2, arbitrary: fc.string({ minLength: min, maxLength: Math.min(max, Math.max(min, 40)) }) },
        { weight: 2, arbitrary: oddString.map(fit) },
        {
          weight: 2,
          arbitrary: fc
            .tuple(known(field), oddPiece, fc.boolean())
            .map(([word, piece, before]) => fit(before ? piece + word : word + piece)),
        },
        { weight: 1, arbitrary: fc.constantFrom('x'.repeat(min), 'x'.repeat(max), 'é'.repeat(max)) },
      );
    }
    case 'integer': {
      // Inside the declared range; where a bound is not declared, also far past what storage holds.
      const min = schema.minimum ?? -(2 ** 31);
      const max = schema.maximum ?? 2 ** 31;
      const beyond: unknown[] = [];
      if (schema.maximum === undefined)
        beyond.push(2 ** 53, 2 ** 63, 1e20, 1e308, new RawJson('1e400'), new RawJson('99999999999999999999'));
      if (schema.minimum === undefined) beyond.push(-(2 ** 53), -(2 ** 63), -1e308, new RawJson('-1e400'));
      // Small values near the minimum too: ids such as a presentation number are small.
      const near = fc.integer({ min: Math.max(min, 0), max: Math.min(max, Math.max(min, 0) + 5) });
      const inside = fc.oneof(
        { weight: 3, arbitrary: fc.integer({ min, max }) },
        { weight: 2, arbitrary: near },
      );
      return beyond.length
        ? fc.oneof({ weight: 4, arbitrary: inside }, { weight: 1, arbitrary: fc.constantFrom(...beyond) })
        : inside;
    }
    case 'number':
      return fc.double({
        min: schema.minimum,
        max: schema.maximum,
        noNaN: true,
        noDefaultInfinity: true,
      });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(fromSchema(schema.items ?? {}, known, depth + 1, field), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.min(schema.maxItems ?? 4, 4),
      });
    case 'object': {
      const properties = schema.properties ?? {};
      const names = Object.keys(properties);
      const record = fc.record(
        Object.fromEntries(names.map((name) => [name, fromSchema(properties[name], known, depth + 1, name)])),
        { requiredKeys: (schema.required ?? []).filter((name) => names.includes(name)) },
      );
      return fc
        .tuple(record, rarely(fc.dictionary(oddString, hostile, { minKeys: 1, maxKeys: 2 })))
        .map(([value, extra]) => (extra ? { ...extra, ...value } : value));
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

// ---- Calls --------------------------------------------------------------------------------------

export interface FuzzCase {
  surface: Surface;
  operation: string;
  credential: Credential;
  /** REST: the path with its query string; MCP and A2A: the endpoint. */
  path: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
}

const QUERY_ODDITIES = [
  '',
  '&',
  '&&',
  '=',
  '==&',
  '%',
  '%2',
  '%zz',
  '%00',
  '%ff%fe',
  '%c0%af',
  '%ed%a0%80',
  '+',
  'a[]=1',
  'a[b]=2',
  '?',
  ';',
  '%26%3D',
  'limit=1&limit=2',
  '__proto__=1',
  'constructor[prototype]=1',
];

type Encoding = 'component' | 'raw' | 'double' | 'plus';

function queryValueText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof RawJson) return value.text.slice(0, 5000);
  return jsonText(value).slice(0, 5000);
}

function encodeQueryText(text: string, encoding: Encoding): string {
  switch (encoding) {
    case 'component':
      return encodeURIComponent(text.replace(/[\ud800-\udfff]/g, '\ufffd'));
    case 'double':
      return encodeURIComponent(encodeURIComponent(text.replace(/[\ud800-\udfff]/g, '\ufffd')));
    case 'plus':
      return encodeURIComponent(text.replace(/[\ud800-\udfff]/g, '\ufffd')).replace(/%20/g, '+');
    default:
      // As it is: the URL parser percent-encodes what it must and leaves the rest (%, &, = included).
      return text.replace(/#/g, '%23');
  }
}

/** A query string from a generated input: every field, each encoded its own way, and odd pieces. */
const queryArbitrary = (input: fc.Arbitrary<unknown>) =>
  fc
    .tuple(
      input,
      fc.array(fc.constantFrom<Encoding>('component', 'raw', 'double', 'plus'), {
        minLength: 8,
        maxLength: 8,
      }),
      rarely(fc.array(fc.constantFrom(...QUERY_ODDITIES), { minLength: 1, maxLength: 2 })).map(
        (list) => list ?? [],
      ),
    )
    .map(([value, encodings, oddities]) => {
      const parts: string[] = [];
      let turn = 0;
      const next = () => encodings[turn++ % encodings.length];
      if (
        value !== null &&
        typeof value === 'object' &&
        !(value instanceof RawJson) &&
        !Array.isArray(value)
      ) {
        for (const [name, item] of Object.entries(value)) {
          const items = Array.isArray(item) ? item : [item];
          for (const one of items)
            parts.push(`${encodeQueryText(name, next())}=${encodeQueryText(queryValueText(one), next())}`);
        }
      } else {
        parts.push(encodeQueryText(queryValueText(value), next()));
      }
      parts.push(...oddities.filter(Boolean));
      return parts.join('&');
    });

const MCP_HEADERS = {
  accept: 'application/json, text/event-stream',
  'content-type': 'application/json',
  'mcp-protocol-version': '2025-06-18',
};

interface Secrets {
  bearer: string;
  sandbox: string;
  cookie: string;
  /** A member on the lowest tiers, who may still ask for a higher one. */
  memberCookie: string;
}

function credentialHeaders(credential: Credential, secrets: Secrets): Record<string, string> {
  switch (credential) {
    case 'bearer':
      return { authorization: `Bearer ${secrets.bearer}` };
    case 'sandbox':
      return { authorization: `Bearer ${secrets.sandbox}` };
    case 'unknown-bearer':
      return { authorization: `Bearer agt_${'A'.repeat(43)}` };
    case 'session':
      return { cookie: secrets.cookie };
    case 'member-session':
      return { cookie: secrets.memberCookie };
    default:
      return {};
  }
}

const credentialArbitrary: fc.Arbitrary<Credential> = fc.oneof(
  { weight: 9, arbitrary: fc.constant<Credential>('bearer') },
  { weight: 2, arbitrary: fc.constant<Credential>('session') },
  { weight: 1, arbitrary: fc.constant<Credential>('member-session') },
  { weight: 2, arbitrary: fc.constant<Credential>('none') },
  { weight: 1, arbitrary: fc.constant<Credential>('sandbox') },
  { weight: 1, arbitrary: fc.constant<Credential>('unknown-bearer') },
);

const idempotencyKey = rarely(
  fc.oneof(
    fc.uuid(),
    oddString.map((text) => text.replace(/[^\x20-\x7e]/g, 'x')),
  ),
);

/** Generated calls of one operation on one surface; `secrets` is read when a call is sent. */
function callsOf(
  op: Operation,
  surface: Surface,
  known: Known,
): fc.Arbitrary<Omit<FuzzCase, 'headers'> & { extra: Record<string, string> }> {
  const input = fc.oneof(
    { weight: 6, arbitrary: fromSchema(op.input as JsonSchema, known) },
    { weight: 1, arbitrary: hostile },
  );
  if (surface === 'rest') {
    const paths = [op.path!, ...(op.aliases ?? [])];
    if (op.inputFrom === 'query') {
      return fc
        .tuple(credentialArbitrary, fc.constantFrom(...paths), queryArbitrary(input))
        .map(([credential, path, query]) => ({
          surface,
          operation: op.id,
          credential,
          method: op.method,
          path: query ? `${path}?${query}` : path,
          extra: {},
        }));
    }
    return fc
      .tuple(credentialArbitrary, fc.constantFrom(...paths), input, idempotencyKey, fc.nat(20))
      .map(([credential, path, value, key, variant]) => {
        const extra: Record<string, string> = { 'content-type': 'application/json' };
        let body = jsonText(value);
        // Now and then, a body cut short or declared as something else.
        if (variant === 0) body = body.slice(0, Math.floor(body.length / 2));
        if (variant === 1) extra['content-type'] = 'text/plain';
        if (variant === 2) extra['content-type'] = 'application/json; charset=latin1';
        if (key !== null) extra['idempotency-key'] = key;
        return { surface, operation: op.id, credential, method: op.method, path, body, extra };
      });
  }
  return fc.tuple(credentialArbitrary, input, idempotencyKey).map(([credential, value, key]) => {
    const extra: Record<string, string> =
      surface === 'mcp' ? { ...MCP_HEADERS } : { 'content-type': 'application/json' };
    if (key !== null) extra['idempotency-key'] = key;
    const body =
      surface === 'mcp'
        ? `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":${JSON.stringify(op.mcpTool)},"arguments":${jsonText(value)}}}`
        : `{"jsonrpc":"2.0","id":1,"method":"tasks/send","params":{"capability":${JSON.stringify(op.mcpTool)},"arguments":${jsonText(value)}}}`;
    return {
      surface,
      operation: op.id,
      credential,
      method: 'POST',
      path: surface === 'mcp' ? '/api/mcp' : '/api/a2a',
      body,
      extra,
    };
  });
}

/** Every (operation, surface) pair the registry serves. */
export function targets(
  operations: readonly Operation[] = OPERATIONS,
): { op: Operation; surface: Surface }[] {
  const all: { op: Operation; surface: Surface }[] = [];
  for (const op of operations) {
    if (op.path !== undefined) all.push({ op, surface: 'rest' });
    if (op.mcpTool) all.push({ op, surface: 'mcp' }, { op, surface: 'a2a' });
  }
  return all;
}

// ---- Running ------------------------------------------------------------------------------------

export interface FuzzFailure {
  path: string;
  problem: string;
  call: string;
}

export interface FuzzReport {
  engine: EngineName;
  seed: number;
  tried: number;
  failed: number;
  failures: FuzzFailure[];
  /** The whole pass; `phases` splits it: app start and seeding, the calls, closing and dropping the database. */
  seconds: number;
  phases: { setup: number; calls: number; close: number };
  bySurface: Record<Surface, number>;
  /** How the calls were answered: a success, or the error_kind of the refusal. */
  outcomes: Record<string, number>;
  /** Successful calls per operation id (every operation should have some: the handlers ran). */
  succeeded: Record<string, number>;
  /** REST answers per operation id and HTTP status, with the first body seen for each (test/openapi-wire.test.ts). */
  wire: Record<string, Record<number, { count: number; body: string }>>;
}

/** A success, or the kind of refusal (the error_kind in the REST body, the tool result or the JSON-RPC error). */
function outcomeOf(surface: Surface, status: number, text: string): string {
  if (status >= 500) return `${status}`;
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    return status < 300 ? 'success' : `http ${status}`;
  }
  if (surface !== 'rest') {
    // MCP answers a refused tool call in a result (with a 401 for a missing token), A2A in an error.
    const message = Array.isArray(body) ? body[0] : body;
    if (typeof message?.error === 'string') return message.error_kind ?? message.error;
    if (message?.error) return message.error.data?.error_kind ?? `json-rpc ${message.error.code}`;
    if (message?.result?.isError) return message.result.structuredContent?.error_kind ?? 'tool error';
    if (message?.result !== undefined) return 'success';
  }
  if (status < 300) return 'success';
  return typeof body?.error_kind === 'string' ? body.error_kind : `http ${status}`;
}

export interface FuzzOptions {
  runs: number;
  seed: number;
  /** Stop generating once the pass (setup included) has run this long, after at least 5 s of calls. */
  timeLimitMs?: number;
  /** 'assert': the first failure throws (shrunk, with seed and path); 'collect': every failure is counted. */
  mode: 'assert' | 'collect';
  /** Replays one run (fast-check's path, printed with a failure). */
  path?: string;
  /** Per-request limit (a hang is a failure). */
  requestTimeoutMs?: number;
  onProgress?: (tried: number, failed: number) => void;
}

const UNLIMITED = {
  anonymousPerMinute: 1e9,
  tokenPerMinute: 1e9,
  signupStartPerHour: 1e9,
  feedbackPerHour: 1e9,
  highlightsPerDay: 1e9,
  rsvpsPerDay: 1e9,
  bookingsPerDay: 1e9,
  eventRequestsPerDay: 1e9,
  leaderboardOptInPerHour: 1e9,
  operatorMutationsPerDay: 1e9,
  researchPerHour: 1e9,
};

/** Work for the operator tools to list and decide: a tier request, a highlight, an event proposal, feedback. */
async function seedWork(t: TestApp): Promise<void> {
  const core = await t.member('core', 'Fuzz Core');
  const token = await t.token(
    core,
    ALL_SCOPES.filter((scope) => t.deps.tiers.grants('core', scope)),
  );
  const member = await t.member('member', 'Fuzz Member');
  const cookie = `${SESSION_COOKIE}=${await createSession(t.deps.db, t.clock, member.id)}`;
  const start = new Date(t.clock.now() + 7 * 86_400_000).toISOString();
  const calls: [string, string, unknown, Record<string, string>][] = [
    ['POST', '/api/tier/request', { tier: 'core', note: 'fuzz' }, { cookie }],
    ['POST', '/api/ingest/highlights/pending', story('fuzz-story-1'), {}],
    ['POST', '/api/events/request', { title: 'Fuzz night', start }, {}],
    ['POST', '/api/agent/feedback', { message: 'Filed by the fuzz suite before it starts.' }, {}],
  ];
  for (const [method, path, body, headers] of calls) {
    const response = await t.call(method, path, { body, headers, token: headers.cookie ? undefined : token });
    if (response.status >= 300)
      throw new Error(`fuzz setup: ${method} ${path} answered ${response.status} ${response.text}`);
  }
}

/** Strings the handlers know (tier names, ids and slugs of the demo data), so they get past lookups. */
async function knownStrings(t: TestApp): Promise<Known> {
  const db = t.deps.db;
  const byField: Record<string, string[]> = {};
  const add = (fields: string[], values: unknown[]) => {
    for (const field of fields) {
      const list = byField[field] ?? [];
      byField[field] = list;
      for (const value of values)
        if (typeof value === 'string' && value && !list.includes(value)) list.push(value);
    }
  };
  const column = async <T>(rows: Promise<T[]>, pick: (row: T) => unknown) => (await rows).map(pick);
  add(['tier'], t.deps.tiers.names());
  add(['scopes'], ALL_SCOPES);
  add(
    ['event_url', 'url', 'luma'],
    await column(db.selectFrom('events').select('platform_url').execute(), (r) => r.platform_url),
  );
  add(['resource_id'], await column(db.selectFrom('resources').select('id').execute(), (r) => r.id));
  add(['slug'], await column(db.selectFrom('newsletter_issues').select('slug').execute(), (r) => r.slug));
  add(
    ['story_id'],
    await column(db.selectFrom('newsletter_stories').select('story_id').execute(), (r) => r.story_id),
  );
  add(['id'], await column(db.selectFrom('highlights').select('id').execute(), (r) => r.id));
  add(
    ['ticket_id'],
    await column(db.selectFrom('feedback').select('ticket_id').execute(), (r) => r.ticket_id),
  );
  add(['id'], await column(db.selectFrom('event_requests').select('id').execute(), (r) => r.id));
  add(['id'], await column(db.selectFrom('tier_requests').select('id').execute(), (r) => r.id));
  add(['decision'], ['approve', 'deny', 'reject', 'decline']);
  add(['status'], ['pending', 'open', 'resolved', 'approved', 'denied']);
  add(['types'], ['tier_requested', 'tier_approved', 'highlight_approved', 'tier_denied']);
  add(['q'], ['printer', 'hack night', 'resin', 'summer', 'Ada', 'a']);
  add(['method'], ['GET']);
  add(
    ['start', 'start_iso', 'end', 'end_iso'],
    ['2030-01-01T10:00:00Z', '2030-01-01T12:00:00Z', '2026-07-16T12:00:00Z'],
  );
  // Paths for batch items: each public read, plain and with odd queries.
  for (const op of OPERATIONS) {
    if (!op.batchable || op.path === undefined) continue;
    add(
      ['path'],
      [
        op.path,
        `${op.path}?limit=1e400`,
        `${op.path}?limit=%00`,
        `${op.path}?limit=-1&x=%zz`,
        `${op.path}?url=%F0`,
      ],
    );
  }
  const all = [...new Set(Object.values(byField).flat())];
  const general = fc.constantFrom(...all);
  const perField = new Map<string, fc.Arbitrary<string>>();
  for (const [field, values] of Object.entries(byField).filter(([, values]) => values.length > 0))
    perField.set(
      field,
      fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...values) }, { weight: 1, arbitrary: general }),
    );
  return (field) => (field !== undefined && perField.get(field)) || general;
}

/** Starts an app on the engine and feeds it generated calls; resolves with what it tried and what failed. */
export async function fuzzEngine(engine: EngineName, options: FuzzOptions): Promise<FuzzReport> {
  const errorLines: string[] = [];
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) {
        if (!line) continue;
        try {
          if ((JSON.parse(line) as { level: number }).level >= 50) errorLines.push(line);
        } catch {
          errorLines.push(line);
        }
      }
      done();
    },
  });
  const begun = Date.now();
  // The pass looks for answers bad input gets, not for what an overloaded machine gets: a CI run
  // shares its cores with the rest of the suite, and a PostgreSQL connection slower than the
  // default 3 s bound would be answered 503 (the right answer there, but not this test's subject).
  const t = await startTestApp({
    engine,
    logStream,
    limits: UNLIMITED,
    config: { databaseTimeouts: { connectTimeoutMs: 12_000, statementTimeoutMs: 12_000 } },
  });
  const report: FuzzReport = {
    engine,
    seed: options.seed,
    tried: 0,
    failed: 0,
    failures: [],
    seconds: 0,
    phases: { setup: 0, calls: 0, close: 0 },
    bySurface: { rest: 0, mcp: 0, a2a: 0 },
    outcomes: {},
    succeeded: {},
    wire: {},
  };
  try {
    const operator = await t.member('operator', 'Fuzz Operator');
    const secrets: Secrets = {
      bearer: await t.token(operator, ALL_SCOPES),
      sandbox: await t.token(operator, ALL_SCOPES, { sandbox: true }),
      cookie: `${SESSION_COOKIE}=${await createSession(t.deps.db, t.clock, operator.id)}`,
      memberCookie: `${SESSION_COOKIE}=${await createSession(t.deps.db, t.clock, (await t.member('member', 'Fuzz Newcomer')).id)}`,
    };
    // The demo community (members, events, resources, newsletter, presentations) for lookups to find.
    await seedDemoCommunity(t.deps);
    await seedWork(t);
    const known = await knownStrings(t);
    const calls = fc.oneof(...targets().map(({ op, surface }) => callsOf(op, surface, known)));
    const timeout = options.requestTimeoutMs ?? 15_000;
    const started = Date.now();
    report.phases.setup = (started - begun) / 1000;

    async function send(
      call: Omit<FuzzCase, 'headers'> & { extra: Record<string, string> },
    ): Promise<string | undefined> {
      const headers = { ...call.extra, ...credentialHeaders(call.credential, secrets) };
      // A self-revoke with the shared bearer would end every later call's credential: it gets its own.
      if (call.operation === 'revokeToken' && (call.credential === 'bearer' || call.credential === 'sandbox'))
        headers.authorization = `Bearer ${await t.token(operator, ALL_SCOPES, { sandbox: call.credential === 'sandbox' })}`;
      const logged = errorLines.length;
      let response: Response;
      let text: string;
      try {
        response = await fetch(t.baseUrl + call.path, {
          method: call.method,
          headers,
          body: call.body,
          signal: AbortSignal.timeout(timeout),
        });
        text = await response.text();
      } catch (error) {
        return `no answer: ${(error as Error).message}`;
      }
      const outcome = outcomeOf(call.surface, response.status, text);
      if (outcome === 'success')
        report.succeeded[call.operation] = (report.succeeded[call.operation] ?? 0) + 1;
      report.outcomes[outcome] = (report.outcomes[outcome] ?? 0) + 1;
      if (call.surface === 'rest') {
        report.wire[call.operation] ??= {};
        const byStatus = report.wire[call.operation];
        byStatus[response.status] ??= { count: 0, body: text };
        byStatus[response.status].count++;
      }
      if (response.status >= 500) return `HTTP ${response.status}: ${text.slice(0, 300)}`;
      if (text.includes('"error_kind":"internal"'))
        return `an internal error in the reply: ${text.slice(0, 300)}`;
      if (call.surface !== 'rest') {
        let body: { error?: { code?: number } } | undefined;
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
        if (body?.error?.code === -32603) return `JSON-RPC internal error: ${text.slice(0, 300)}`;
      }
      if (errorLines.length > logged)
        return `logged at error level: ${errorLines.slice(logged).join('\n').slice(0, 600)}`;
      return undefined;
    }

    const describeCall = (call: Omit<FuzzCase, 'headers'> & { extra: Record<string, string> }) => {
      const body =
        call.body === undefined
          ? ''
          : ` ${call.body.length > 400 ? `${call.body.slice(0, 400)}… (${call.body.length} chars)` : call.body}`;
      return `${call.surface} ${call.operation} [${call.credential}] ${call.method} ${call.path.slice(0, 400)}${body}`;
    };

    // fast-check's time limit abandons the run in progress (a race against a timer): the server
    // must not close under that call, which would then fail as unanswered. Awaited before closing.
    let running: Promise<void> | undefined;
    const property = fc.asyncProperty(calls, (call) => {
      running = runOne(call);
      return running;
    });
    const runOne = async (call: Parameters<typeof send>[0]): Promise<void> => {
      const run = report.tried++;
      report.bySurface[call.surface]++;
      const problem = await send(call);
      if (problem) {
        report.failed++;
        // Kept in both modes: a failure found just before the time limit ends the pass without
        // fast-check throwing (its shrinking is cut off), and the test must still say what it was.
        const path = options.path ?? String(run);
        if (report.failures.length < 200) report.failures.push({ path, problem, call: describeCall(call) });
        if (options.mode === 'assert') throw new Error(`${problem}\n  call: ${describeCall(call)}`);
      }
      options.onProgress?.(report.tried, report.failed);
    };
    await fc.assert(property, {
      seed: options.seed,
      numRuns: options.runs,
      path: options.path,
      // The limit covers the whole pass: what setup took (a busy PostgreSQL) is taken off the calls' share.
      interruptAfterTimeLimit:
        options.timeLimitMs === undefined
          ? undefined
          : Math.max(5000, options.timeLimitMs - (started - begun)),
      markInterruptAsFailure: false,
      endOnFailure: options.mode === 'collect',
    });
    await running?.catch(() => {});
    report.phases.calls = (Date.now() - started) / 1000;
  } finally {
    const closing = Date.now();
    await t.close();
    report.phases.close = (Date.now() - closing) / 1000;
    report.seconds = (Date.now() - begun) / 1000;
  }
  return report;
}
