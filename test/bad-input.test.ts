import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { ERROR_KINDS } from '../src/core/errors.ts';
import { createSession, SESSION_COOKIE } from '../src/domain/auth/sessions.ts';
import { revokeToken } from '../src/domain/auth/tokens.ts';
import type { Member } from '../src/domain/members/members.ts';
import { validateInput } from '../src/operations/pipeline/validate.ts';
import { OPERATIONS } from '../src/operations/registry.ts';
import { isRestOperation, type Operation } from '../src/operations/types.ts';
import { sha256 } from '../src/secrets.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines, postgresUrl } from './support/databases.ts';
import type { JsonSchema } from './support/json-schema.ts';
import { waitUntil } from './support/wait.ts';

// Every operation of the registry gets every kind of bad input; a new operation is covered by
// being added to OPERATIONS. The rule: a 4xx in the Error shape, never a 5xx, never a hang.

const HUGE = 1_000_000_000;
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

interface Wire {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

interface SendOptions {
  headers?: Record<string, string>;
  body?: string | ReadableStream<Uint8Array>;
}

/** A raw request: headers exactly as given (no Bearer added), and never longer than 5 s. */
async function send(t: TestApp, method: string, path: string, options: SendOptions = {}): Promise<Wire> {
  const init: RequestInit & { duplex?: 'half' } = {
    method,
    headers: options.headers,
    body: options.body,
    signal: AbortSignal.timeout(5000),
  };
  if (options.body instanceof ReadableStream) init.duplex = 'half';
  const response = await fetch(t.baseUrl + path, init);
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, body, text };
}

const JSON_HEADERS = { 'content-type': 'application/json' };

function describeResponse(label: string, response: Wire): string {
  return `${label}: ${response.status} ${response.text.slice(0, 300)}`;
}

/** The spec's Error shape (2.2) on a 4xx, with the request id that the header also carries. */
function assertErrorShape(response: Wire, label: string): void {
  const about = describeResponse(label, response);
  assert.ok(response.status >= 400 && response.status < 500, `expected a 4xx — ${about}`);
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/, about);
  assert.equal(typeof response.body, 'object', about);
  assert.equal(typeof response.body.error, 'string', about);
  assert.ok((ERROR_KINDS as readonly string[]).includes(response.body.error_kind), about);
  assert.equal(response.body.request_id, response.headers.get('x-request-id'), about);
}

function assertRejected(
  response: Wire,
  label: string,
  expected: { status: number; kind: string; error?: string; field?: string },
): void {
  assertErrorShape(response, label);
  const about = describeResponse(label, response);
  assert.equal(response.status, expected.status, about);
  assert.equal(response.body.error_kind, expected.kind, about);
  if (expected.error !== undefined) assert.equal(response.body.error, expected.error, about);
  if (expected.field !== undefined) assert.equal(response.body.field, expected.field, about);
}

function assertRateHeaders(response: Wire, label: string): void {
  for (const name of [
    'ratelimit',
    'ratelimit-policy',
    'ratelimit-limit',
    'ratelimit-remaining',
    'ratelimit-reset',
  ]) {
    assert.ok(response.headers.get(name), `${label}: ${name} header missing`);
  }
}

// ---- Reading the TypeBox schema --------------------------------------------------------------

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** The JSON types a property accepts; undefined when the schema does not constrain the type. */
function acceptedTypes(schema: JsonSchema): Set<string> | undefined {
  if (schema.const !== undefined) return new Set([jsonType(schema.const)]);
  if (schema.enum) return new Set(schema.enum.map(jsonType));
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) {
    const all = new Set<string>();
    for (const branch of branches) {
      const types = acceptedTypes(branch);
      if (!types) return undefined;
      for (const type of types) all.add(type);
    }
    return all;
  }
  if (schema.type === undefined) return undefined;
  return new Set(Array.isArray(schema.type) ? schema.type : [schema.type]);
}

function accepts(types: Set<string>, value: unknown): boolean {
  const type = jsonType(value);
  if (types.has(type)) return true;
  return type === 'integer' && types.has('number');
}

/** One value of each JSON type, sent in turn to a property declared with another type. */
const WRONG_TYPE_SAMPLES: unknown[] = ['a string', 12345, 1.5, true, { nested: 1 }, ['item'], null];

/** A value the property accepts, for building a baseline input that passes validation. */
function sampleFor(schema: JsonSchema): unknown {
  if (schema.default !== undefined) return schema.default;
  if (schema.examples?.length) return schema.examples[0];
  if (schema.const !== undefined) return schema.const;
  if (schema.enum?.length) return schema.enum[0];
  const branch = (schema.anyOf ?? schema.oneOf)?.[0];
  if (branch) return sampleFor(branch);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string':
      if (schema.format === 'uri') return 'https://example.org/';
      if (schema.format === 'date-time') return '2026-07-16T12:00:00Z';
      return 'sample text for a bad-input test'.padEnd(schema.minLength ?? 1, 'x');
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return false;
    case 'array':
      return [];
    default:
      return {};
  }
}

/** Inputs that exercise a successful call, where the schema alone cannot produce one. */
const VALID_INPUTS: Record<string, Record<string, unknown>> = {
  startSignup: { scopes: ['read:public'], client_name: 'bad-input test' },
  submitFeedback: { message: 'The bad-input suite filed this while checking bearer handling.' },
};

function schemaOf(op: Operation): JsonSchema {
  return op.input as unknown as JsonSchema;
}

/** Every required property filled with an accepted value; it must pass the operation's own schema. */
function baselineOf(op: Operation): Record<string, unknown> {
  const schema = schemaOf(op);
  const baseline: Record<string, unknown> = {};
  for (const name of schema.required ?? []) baseline[name] = sampleFor(schema.properties![name]);
  return baseline;
}

function validInputOf(op: Operation): Record<string, unknown> {
  return VALID_INPUTS[op.id] ?? baselineOf(op);
}

function queryString(input: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(input)) {
    for (const item of Array.isArray(value) ? value : [value]) params.append(name, String(item));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

const needsBearer = (op: Operation) => op.credential === 'bearer' || op.credential === 'bearer_or_session';

// ---- Wrong credentials -----------------------------------------------------------------------

interface BadAuthorization {
  label: string;
  header: (valid: string, revoked: string) => string;
  /** The error code a bearer operation answers with. */
  code: 'invalid_authorization' | 'invalid_token' | 'token_revoked';
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

const BAD_AUTHORIZATIONS: BadAuthorization[] = [
  { label: 'empty Bearer', header: () => 'Bearer ', code: 'invalid_authorization' },
  { label: 'Bearer and spaces only', header: () => 'Bearer     ', code: 'invalid_authorization' },
  { label: 'no scheme', header: (valid) => valid, code: 'invalid_authorization' },
  { label: 'Basic credentials', header: () => 'Basic dXNlcjpwYXNzd29yZA==', code: 'invalid_authorization' },
  { label: 'Basic with an agent token', header: (valid) => `Basic ${valid}`, code: 'invalid_authorization' },
  { label: 'two tokens', header: (valid) => `Bearer ${valid} ${valid}`, code: 'invalid_authorization' },
  { label: 'agt_ with + / =', header: () => `Bearer agt_${'+/='.repeat(14)}A`, code: 'invalid_token' },
  { label: 'agt_ with a dot', header: (valid) => `Bearer ${valid.slice(0, -1)}.`, code: 'invalid_token' },
  { label: 'agt_ one short', header: (valid) => `Bearer ${valid.slice(0, -1)}`, code: 'invalid_token' },
  { label: 'agt_ one long', header: (valid) => `Bearer ${valid}A`, code: 'invalid_token' },
  { label: 'agt_ alone', header: () => 'Bearer agt_', code: 'invalid_token' },
  {
    label: 'AGT_ upper-case prefix',
    header: (valid) => `Bearer AGT_${valid.slice(4)}`,
    code: 'invalid_token',
  },
  {
    label: 'agt_ well formed but unknown',
    header: () => `Bearer agt_${randomBytes(32).toString('base64url')}`,
    code: 'invalid_token',
  },
  { label: 'revoked token', header: (_valid, revoked) => `Bearer ${revoked}`, code: 'token_revoked' },
  { label: 'sk_ prefix', header: () => `Bearer sk_live_${BASE64URL.slice(0, 40)}`, code: 'invalid_token' },
  { label: '10 KB header', header: () => `Bearer ${'a'.repeat(10 * 1024)}`, code: 'invalid_token' },
  {
    label: '10 KB agt_ header',
    header: () => `Bearer agt_${BASE64URL.repeat(160)}`,
    code: 'invalid_token',
  },
];

for (const engine of engines) {
  describe(`bad input on every operation (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    /** A revoked token whose member could otherwise call anything. */
    let revoked: string;

    before(async () => {
      t = await startTestApp({
        engine: engine.name,
        // The suite sends thousands of requests from one IP; the limits have their own tests.
        limits: {
          anonymousPerMinute: HUGE,
          tokenPerMinute: HUGE,
          signupStartPerHour: HUGE,
          feedbackPerHour: HUGE,
          highlightsPerDay: HUGE,
        },
      });
      const operator = await t.member('operator', 'Revoked Holder');
      revoked = await t.token(operator, ['read:public']);
      const row = await t.deps.db
        .selectFrom('tokens')
        .select('id')
        .where('hash', '=', sha256(revoked))
        .executeTakeFirstOrThrow();
      await revokeToken(t.deps, row.id);
    });
    after(() => t?.close());

    const callers = new Map<string, Member>();
    /** One member per operation, on the lowest tier that grants the operation's scope. */
    async function callerOf(op: Operation): Promise<Member> {
      let member = callers.get(op.id);
      if (!member) {
        const tier = op.scope ? t.deps.tiers.tierFor(op.scope)! : t.deps.tiers.lowest;
        member = await t.member(tier, `Caller of ${op.id}`);
        callers.set(op.id, member);
      }
      return member;
    }

    /** A fresh token with exactly the scope the operation needs (a refused case must not spend it). */
    async function validToken(op: Operation): Promise<string> {
      return t.token(await callerOf(op), op.scope ? [op.scope] : []);
    }

    /** Credentials that pass the operation's gate, so that the input itself is what gets judged. */
    async function credentials(op: Operation): Promise<Record<string, string>> {
      if (op.credential === 'session') {
        const session = await createSession(t.deps.db, t.clock, (await callerOf(op)).id);
        return { cookie: `${SESSION_COOKIE}=${session}` };
      }
      if (op.credential === 'public' || op.credential === 'optional_bearer') return {};
      return { authorization: `Bearer ${await validToken(op)}` };
    }

    /** What a write could have changed: none of it may move when the input is refused. */
    async function storedState() {
      const count = async (
        table:
          | 'feedback'
          | 'highlights'
          | 'device_grants'
          | 'idempotency'
          | 'vcs_links'
          | 'leaderboard_counts',
      ) => {
        const row = await t.deps.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow();
        return Number(row.n);
      };
      const revokedTokens = await t.deps.db
        .selectFrom('tokens')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('revoked_at', 'is not', null)
        .executeTakeFirstOrThrow();
      return {
        feedback: await count('feedback'),
        highlights: await count('highlights'),
        device_grants: await count('device_grants'),
        idempotency: await count('idempotency'),
        vcs_links: await count('vcs_links'),
        leaderboard_counts: await count('leaderboard_counts'),
        revoked_tokens: Number(revokedTokens.n),
      };
    }

    /** Runs the checks and then asserts that nothing was stored or revoked by them. */
    async function changesNothing(check: () => Promise<void>): Promise<void> {
      const before = await storedState();
      await check();
      assert.deepEqual(await storedState(), before, 'a refused request changed the stored state');
    }

    /** Sends one input to the operation, as JSON for body operations and as a query otherwise. */
    async function sendInput(op: Operation, path: string, input: Record<string, unknown>) {
      const headers = await credentials(op);
      if (op.inputFrom === 'query') return send(t, op.method, path + queryString(input), { headers });
      return send(t, op.method, path, {
        headers: { ...headers, ...JSON_HEADERS },
        body: JSON.stringify(input),
      });
    }

    for (const op of OPERATIONS.filter(isRestOperation)) {
      const paths = [op.path, ...(op.aliases ?? [])];
      const schema = schemaOf(op);
      const properties = Object.entries(schema.properties ?? {});

      describe(`${op.method} ${op.path} (${op.id})`, () => {
        test('the baseline input passes the schema, so each case below isolates one fault', () => {
          assert.doesNotThrow(() => validateInput(op.input, baselineOf(op), op.inputFrom === 'query'));
          assert.doesNotThrow(() => validateInput(op.input, validInputOf(op), op.inputFrom === 'query'));
        });

        if (op.inputFrom === 'body') {
          test('malformed JSON is 400 invalid_json', async () => {
            const bodies = [
              '{',
              '{"message": "unterminated',
              "{'single': 'quotes'}",
              '{"a": 1,}',
              '{"a": 1} trailing',
              'undefined',
              'NaN',
              '\u0000',
              '{"__proto__": {"polluted": true}}',
              '{"constructor": {"prototype": {"polluted": true}}}',
            ];
            await changesNothing(async () => {
              for (const path of paths) {
                for (const body of bodies) {
                  const headers = { ...(await credentials(op)), ...JSON_HEADERS };
                  const response = await send(t, op.method, path, { headers, body });
                  assertRejected(response, `body ${JSON.stringify(body)}`, {
                    status: 400,
                    kind: 'invalid_json',
                    error: 'invalid_json',
                  });
                }
              }
              assert.equal(({} as { polluted?: boolean }).polluted, undefined, 'prototype untouched');
            });
          });

          test('an empty body sent as application/json is no body', async () => {
            for (const path of paths) {
              const headers = await credentials(op);
              const empty = await send(t, op.method, path, {
                headers: { ...headers, ...JSON_HEADERS },
                body: '',
              });
              const none = await send(t, op.method, path, { headers: await credentials(op) });
              assert.equal(empty.status, none.status, `${path}: ${empty.text} vs ${none.text}`);
              assert.equal(empty.body?.error, none.body?.error);
            }
          });

          test('a JSON array, string, number, boolean or null body is 400 validation', async () => {
            const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
            const bodies = ['[]', '[{}]', '"a string"', '""', '42', 'true', 'null', deep];
            await changesNothing(async () => {
              for (const path of paths) {
                for (const body of bodies) {
                  const headers = { ...(await credentials(op)), ...JSON_HEADERS };
                  const response = await send(t, op.method, path, { headers, body });
                  // A body past the operation's own cap is refused before it is parsed.
                  if (Buffer.byteLength(body) > (op.bodyLimit ?? t.deps.config.defaultBodyLimit)) {
                    assertRejected(response, `body ${body.slice(0, 20)}`, {
                      status: 413,
                      kind: 'payload_too_large',
                    });
                    continue;
                  }
                  assertRejected(response, `body ${body.slice(0, 20)}`, {
                    status: 400,
                    kind: 'validation',
                    field: '(body)',
                  });
                }
              }
            });
          });

          test('a body over the cap is 413; one at the cap is not', async () => {
            const limit = op.bodyLimit ?? t.deps.config.defaultBodyLimit;
            // A JSON array of exactly n bytes: valid JSON, refused by validation when it gets that far.
            const arrayOf = (bytes: number) => `["${'x'.repeat(bytes - 4)}"]`;
            assert.equal(Buffer.byteLength(arrayOf(limit)), limit);
            await changesNothing(async () => {
              for (const path of paths) {
                const headers = { ...(await credentials(op)), ...JSON_HEADERS };
                const atCap = await send(t, op.method, path, { headers, body: arrayOf(limit) });
                assertRejected(atCap, `body of ${limit} bytes`, {
                  status: 400,
                  kind: 'validation',
                  field: '(body)',
                });
                const over = await send(t, op.method, path, { headers, body: arrayOf(limit + 1) });
                assertRejected(over, `body of ${limit + 1} bytes`, {
                  status: 413,
                  kind: 'payload_too_large',
                  error: 'payload_too_large',
                });
                // Without Content-Length (chunked), the cap is enforced on the bytes received.
                const payload = new TextEncoder().encode(arrayOf(limit + 1));
                const stream = new ReadableStream<Uint8Array>({
                  start(controller) {
                    for (let i = 0; i < payload.length; i += 4096)
                      controller.enqueue(payload.slice(i, i + 4096));
                    controller.close();
                  },
                });
                const chunked = await send(t, op.method, path, { headers, body: stream });
                assertRejected(chunked, `chunked body of ${limit + 1} bytes`, {
                  status: 413,
                  kind: 'payload_too_large',
                });
              }
            });
          });

          test('a body that is not JSON is 415', async () => {
            const bodies: [string, string][] = [
              ['text/plain', JSON.stringify(validInputOf(op))],
              ['text/plain;charset=UTF-8', JSON.stringify(validInputOf(op))],
              ['application/xml', '<feedback><message>hello</message></feedback>'],
              ['text/xml', '<a/>'],
              ['application/x-www-form-urlencoded', new URLSearchParams(validInputOf(op) as any).toString()],
              [
                'multipart/form-data; boundary=x',
                '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--',
              ],
              ['application/octet-stream', 'binary'],
              ['application/jsonp', '{}'],
              ['image/png', '\x89PNG'],
            ];
            await changesNothing(async () => {
              for (const path of paths) {
                for (const [type, body] of bodies) {
                  const headers = { ...(await credentials(op)), 'content-type': type };
                  const response = await send(t, op.method, path, { headers, body });
                  assertRejected(response, `Content-Type ${type}`, {
                    status: 415,
                    kind: 'unsupported_media_type',
                    error: 'unsupported_media_type',
                  });
                }
              }
            });
          });
        }

        test('wrong types, missing required fields, unknown fields and oversize values are 400', async () => {
          const fromQuery = op.inputFrom === 'query';
          const baseline = baselineOf(op);
          const cases: { label: string; input: Record<string, unknown>; field: string }[] = [];

          for (const [name, property] of properties) {
            const types = acceptedTypes(property);
            if (types && !fromQuery) {
              for (const sample of WRONG_TYPE_SAMPLES) {
                if (accepts(types, sample)) continue;
                cases.push({
                  label: `${name} = ${JSON.stringify(sample)}`,
                  input: { ...baseline, [name]: sample },
                  field: name,
                });
              }
            } else if (types && fromQuery) {
              // A query value is text; repeating a scalar parameter is the type error a URL can carry.
              if (!types.has('array')) {
                const value = String(sampleFor(property));
                cases.push({
                  label: `${name} repeated`,
                  input: { ...baseline, [name]: [value, value] },
                  field: name,
                });
              }
              if (!types.has('string')) {
                cases.push({
                  label: `${name} = text`,
                  input: { ...baseline, [name]: 'not-a-value' },
                  field: name,
                });
              }
            }
            if (property.maxLength !== undefined) {
              const long = 'x'.repeat(property.maxLength + 1);
              cases.push({
                label: `${name} of ${property.maxLength + 1} chars`,
                input: { ...baseline, [name]: long },
                field: name,
              });
            }
            if (property.minLength !== undefined && property.minLength > 0) {
              const short = 'x'.repeat(property.minLength - 1);
              cases.push({
                label: `${name} of ${property.minLength - 1} chars`,
                input: { ...baseline, [name]: short },
                field: name,
              });
            }
            if (!fromQuery && property.maxItems !== undefined) {
              const many = Array.from({ length: property.maxItems + 1 }, () =>
                sampleFor(property.items ?? {}),
              );
              cases.push({
                label: `${name} with ${property.maxItems + 1} items`,
                input: { ...baseline, [name]: many },
                field: name,
              });
            }
            if (!fromQuery && property.items?.maxLength !== undefined) {
              const long = 'x'.repeat(property.items.maxLength + 1);
              cases.push({
                label: `${name}[0] of ${property.items.maxLength + 1} chars`,
                input: { ...baseline, [name]: [long] },
                field: `${name}.0`,
              });
            }
          }
          for (const name of schema.required ?? []) {
            const { [name]: _missing, ...rest } = baseline;
            cases.push({ label: `without ${name}`, input: rest, field: name });
          }
          if (schema.additionalProperties === false) {
            cases.push({
              label: 'unknown field',
              input: { ...baseline, unexpected_field: 1 },
              field: 'unexpected_field',
            });
            cases.push({ label: 'misspelt field', input: { ...baseline, Scopes_: 'x' }, field: 'Scopes_' });
          }

          await changesNothing(async () => {
            for (const path of paths) {
              for (const { label, input, field } of cases) {
                const response = await sendInput(op, path, input);
                assertRejected(response, label, {
                  status: 400,
                  kind: 'validation',
                  error: 'validation_failed',
                  field,
                });
              }
            }
          });
        });

        test('every wrong shape of bearer token', async () => {
          const input = needsBearer(op) ? {} : validInputOf(op);
          const valid = await validToken(op);
          const sendWith = (path: string, extra: Record<string, string>) =>
            op.inputFrom === 'query'
              ? send(t, op.method, path + queryString(input), { headers: extra })
              : send(t, op.method, path, {
                  headers: { ...extra, ...JSON_HEADERS },
                  body: JSON.stringify(input),
                });

          for (const path of paths) {
            // What an anonymous caller gets with the same input: a bad token must not do better or worse.
            const anonymous = needsBearer(op) ? undefined : await sendWith(path, {});
            for (const bad of BAD_AUTHORIZATIONS) {
              const label = `${bad.label} on ${op.id}`;
              const response = await sendWith(path, { authorization: bad.header(valid, revoked) });
              assert.ok(response.status < 500, describeResponse(label, response));

              if (op.acceptsRevokedToken && bad.code === 'token_revoked') {
                // Self-revoke is idempotent: a revoked token may revoke itself again (reference §2).
                assert.equal(response.status, 200, describeResponse(label, response));
                assert.equal(response.body.ok, true);
                assert.equal(response.body.already_revoked, true);
                assert.equal(response.body.prefix, revoked.slice(0, 10));
                continue;
              }
              if (needsBearer(op)) {
                assertRejected(response, label, { status: 401, kind: 'unauthorized', error: bad.code });
                assert.equal(response.body.ok, false, `${label}: auth-gate rejections carry ok:false`);
                assert.equal(
                  response.headers.get('www-authenticate'),
                  null,
                  `${label}: no challenge (spec 5.11)`,
                );
                assertRateHeaders(response, label);
                continue;
              }
              // Public and optional-bearer operations treat a refused bearer as anonymous.
              assert.equal(response.status, anonymous!.status, describeResponse(label, response));
              assert.equal(response.body?.error, anonymous!.body?.error, describeResponse(label, response));
              if (response.status >= 400) assertErrorShape(response, label);
              if (response.body && 'authenticated' in response.body) {
                assert.equal(response.body.authenticated, false, `${label}: treated as anonymous`);
              }
              if (response.body && 'ready' in response.body) {
                // setup-check answers 200 and names the problem instead of refusing.
                assert.equal(response.status, 200);
                assert.equal(response.body.ready, false, label);
                assert.equal(response.body.checks.token, bad.code, label);
                assert.ok(response.body.missing.length > 0, label);
              }
            }
          }
        });

        if (op.scope && needsBearer(op)) {
          test('a valid token without the scope is 403 insufficient_scope, ok:false, with the tier', async () => {
            const member = await t.member('operator', `Scopeless caller of ${op.id}`);
            const other = t.deps.tiers.scopesOf('operator').find((s) => s !== op.scope)!;
            const token = await t.token(member, [other]);
            await changesNothing(async () => {
              for (const path of paths) {
                const response =
                  op.inputFrom === 'query'
                    ? await send(t, op.method, path, { headers: { authorization: `Bearer ${token}` } })
                    : await send(t, op.method, path, {
                        headers: { authorization: `Bearer ${token}`, ...JSON_HEADERS },
                        body: JSON.stringify(validInputOf(op)),
                      });
                assertRejected(response, `${op.id} without ${op.scope}`, {
                  status: 403,
                  kind: 'insufficient_scope',
                  error: 'insufficient_scope',
                });
                assert.equal(response.body.ok, false);
                assert.equal(response.body.tier, 'operator');
                assertRateHeaders(response, op.id);
              }
            });
          });
        }

        if (op.inputFrom === 'body') {
          test('NUL bytes, control characters and lone surrogates in strings never cause a 5xx', async () => {
            const nasty = [
              'a\u0000b',
              '\u0000',
              '\ud800',
              'x\udfff',
              '\u001b[31mred',
              '\u202e\u200b',
              '😀'.repeat(10),
            ];
            for (const [name, property] of properties) {
              if (!acceptedTypes(property)?.has('string')) continue;
              for (const value of nasty) {
                const response = await sendInput(op, op.path, { ...validInputOf(op), [name]: value });
                assert.ok(
                  response.status < 500,
                  describeResponse(`${name} = ${JSON.stringify(value)}`, response),
                );
                assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
              }
            }
          });
        }
      });
    }

    describe('the /api/ catch-all', () => {
      function assertCatchAll(response: Wire, label: string): void {
        const about = describeResponse(label, response);
        assert.equal(response.status, 401, about);
        assert.match(response.headers.get('content-type') ?? '', /^application\/json/, about);
        assert.equal(typeof response.body.error, 'object', `${about}: the catch-all error is an object`);
        assert.equal(typeof response.body.error.code, 'string', about);
        assert.equal(typeof response.body.error.message, 'string', about);
        assert.equal(
          response.headers.get('www-authenticate'),
          `Bearer resource_metadata="${t.baseUrl}/.well-known/oauth-protected-resource"`,
          about,
        );
        assertRateHeaders(response, label);
      }

      test('any /api/ path matching no operation is 401 with the challenge and rate headers', async () => {
        const valid = await validToken(OPERATIONS[0]);
        const paths = [
          '/api/',
          '/api/nope',
          '/api/agent',
          '/api/agent/token',
          '/api/agent/token/revoke/extra',
          '/api/agent/setup-check/',
          '/api/v1/agent/setup-check',
          '/api/%00',
          '/api/%E0%A4%A',
          `/api/${'a'.repeat(4000)}`,
          '/api/nope?x=1&y=%zz',
        ];
        for (const path of paths) {
          assertCatchAll(await send(t, 'GET', path), `GET ${path.slice(0, 60)}`);
          assertCatchAll(
            await send(t, 'GET', path, { headers: { authorization: `Bearer ${valid}` } }),
            `GET ${path.slice(0, 60)} with a valid token`,
          );
          assertCatchAll(
            await send(t, 'POST', path, { headers: JSON_HEADERS, body: '{}' }),
            `POST ${path.slice(0, 60)}`,
          );
          // The path decides before the body does: an unparseable body on no operation is the catch-all.
          assertCatchAll(
            await send(t, 'POST', path, { headers: JSON_HEADERS, body: '{oops' }),
            `POST ${path.slice(0, 60)} with malformed JSON`,
          );
          assertCatchAll(
            await send(t, 'POST', path, { headers: { 'content-type': 'application/xml' }, body: '<a/>' }),
            `POST ${path.slice(0, 60)} with XML`,
          );
        }
        const huge = `["${'x'.repeat(t.deps.config.defaultBodyLimit + 10)}"]`;
        assertCatchAll(
          await send(t, 'POST', '/api/nope', { headers: JSON_HEADERS, body: huge }),
          'huge body',
        );
      });

      test('a wrong method on a known path is the same catch-all', async () => {
        const served = new Map<string, Set<string>>();
        for (const op of OPERATIONS.filter(isRestOperation)) {
          for (const path of [op.path, ...(op.aliases ?? [])]) {
            const methods = served.get(path) ?? new Set<string>();
            methods.add(op.method);
            if (op.method === 'GET') methods.add('HEAD');
            served.set(path, methods);
          }
        }
        for (const [path, methods] of served) {
          for (const method of METHODS) {
            if (methods.has(method)) continue;
            const withBody = method !== 'GET' && method !== 'OPTIONS';
            const response = await send(
              t,
              method,
              path,
              withBody ? { headers: JSON_HEADERS, body: '{}' } : {},
            );
            assertCatchAll(response, `${method} ${path}`);
          }
        }
      });

      test('outside /api/ an unknown path is a plain 404 in the Error shape', async () => {
        const response = await send(t, 'GET', '/no/such/page');
        assertRejected(response, 'GET /no/such/page', { status: 404, kind: 'not_found', error: 'not_found' });
        assert.equal(response.headers.get('www-authenticate'), null);
        const badUrl = await send(t, 'GET', '/docs/%E0%A4%A');
        assertRejected(badUrl, 'GET /docs/%E0%A4%A', { status: 400, kind: 'validation' });
      });
    });

    if (engine.name === 'postgres') {
      test('the service survives PostgreSQL dropping its idle connections', async () => {
        const token = await validToken(OPERATIONS.find((op) => op.id === 'getHighlightStatus')!);
        const check = () =>
          send(t, 'GET', '/api/agent/setup-check', { headers: { authorization: `Bearer ${token}` } });
        assert.equal((await check()).status, 200);
        const admin = new pg.Client({ connectionString: postgresUrl });
        await admin.connect();
        const database = new URL(t.database.url).pathname.slice(1);
        try {
          const terminated = await admin.query(
            'SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1',
            [database],
          );
          assert.ok(terminated.rowCount! > 0, 'the app held connections to terminate');
          const pids = terminated.rows.map((row) => row.pid);
          // Each backend has exited (and closed its socket) once it leaves pg_stat_activity; the
          // app's pool, in this process, sees the closed sockets as this poll's round trips let
          // the event loop run. An unhandled pool error would end this process. Only the terminated
          // backends are waited for: the change listener reconnects on its own 100 ms after it
          // dropped, so a wait for no connection at all could miss its moment and never end.
          await waitUntil(async () => {
            const left = await admin.query(
              'SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ANY($1::int[])',
              [pids],
            );
            return left.rows[0].n === 0;
          }, 'the terminated backends to exit');
        } finally {
          await admin.end();
        }
        for (let i = 0; i < 5; i++) {
          const response = await check();
          assert.equal(response.status, 200, response.text);
          assert.equal(response.body.ready, true);
        }
      });
    }
  });
}
