// The error catalogue is the one list of codes: every code src/ answers with is declared there, and
// every declared code is answered somewhere. tsc refuses `apiError('undeclared')`; this test reads
// the source for what tsc cannot see: bodies and codes written as plain strings.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ApiError, ERROR_KINDS } from '../src/core/api-error.ts';
import { apiError, ERROR_CATALOGUE, type ErrorEntry, errorBody } from '../src/core/error-catalogue.ts';

const SRC = fileURLToPath(new URL('../src', import.meta.url));
const CATALOGUE = 'core/error-catalogue.ts';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

const SOURCES = sourceFiles(SRC).map((path) => ({
  file: relative(SRC, path),
  text: readFileSync(path, 'utf8'),
}));
const OTHERS = SOURCES.filter((source) => source.file !== CATALOGUE);
const DECLARED = new Set(Object.keys(ERROR_CATALOGUE));

/**
 * The calls that name their code with an expression instead of a literal, and the codes each can
 * be: tsc holds the expression to declared codes, this list says where they are produced.
 */
const CODES_BY_EXPRESSION: Record<string, { expression: string; codes: string[] }> = {
  'operations/keys/signing-keys.ts': {
    expression: 'error.reason',
    codes: ['token_not_found', 'invalid_key', 'key_already_bound', 'no_signing_key'],
  },
};

function matches(pattern: RegExp): { file: string; match: RegExpMatchArray }[] {
  return OTHERS.flatMap(({ file, text }) => [...text.matchAll(pattern)].map((match) => ({ file, match })));
}

test('an ApiError is built only by the catalogue (apiError), never with a status chosen on the spot', () => {
  const built = matches(/new ApiError\(/g).map(({ file }) => file);
  assert.deepEqual(built, []);
});

test('every code a call names is declared; a code an answer takes from an expression is one the test knows', () => {
  for (const { file, match } of matches(
    /\b(?:rpcOf|statusOfCode|kindOfCode|refusedWith)\(\s*\[?\s*'([^']+)'/g,
  ))
    assert.ok(DECLARED.has(match[1]), `${file}: '${match[1]}' is not declared in ${CATALOGUE}`);
  for (const { file, match } of matches(/\b(?:apiError|errorBody)\(\s*([^,)]+)/g)) {
    const argument = match[1].trim();
    const literal = /^'([^']*)'$/.exec(argument);
    if (literal) {
      assert.ok(DECLARED.has(literal[1]), `${file}: '${literal[1]}' is not declared in ${CATALOGUE}`);
      continue;
    }
    assert.equal(
      CODES_BY_EXPRESSION[file]?.expression,
      argument,
      `${file}: the code ${argument} is not a literal; name the code, or list the expression here`,
    );
  }
});

test('no Error body is written by hand: error and error_kind come from the catalogue', () => {
  const handWritten = matches(/\berror_kind:\s*['"`]/g).map(({ file, match }) => `${file}: ${match[0]}`);
  assert.deepEqual(handWritten, []);
});

test('a code or kind a surface compares against is a declared one', () => {
  for (const { file, match } of matches(/(?<!typeof [\w?.]*)\.error\s*[!=]==\s*'([^']+)'/g))
    assert.ok(DECLARED.has(match[1]), `${file} compares error with undeclared '${match[1]}'`);
  for (const { file, match } of matches(/\berror_kind\s*[!=]==\s*'([^']+)'/g))
    assert.ok(
      (ERROR_KINDS as readonly string[]).includes(match[1]),
      `${file} compares error_kind with '${match[1]}'`,
    );
});

test('every declared code is produced somewhere in src/', () => {
  const named = new Set(matches(/\b(?:apiError|errorBody)\(\s*'([^']+)'/g).map(({ match }) => match[1]));
  for (const [file, { codes }] of Object.entries(CODES_BY_EXPRESSION)) {
    const source = OTHERS.find((s) => s.file === file);
    assert.ok(source, `${file} is gone: update CODES_BY_EXPRESSION`);
    for (const code of codes) named.add(code);
  }
  const never = [...DECLARED].filter((code) => !named.has(code));
  assert.deepEqual(never, [], 'declared but never produced: remove them or produce them');
});

test('each declaration is whole: an HTTP status, or an A2A-only code with its JSON-RPC code', () => {
  for (const [code, declared] of Object.entries(ERROR_CATALOGUE)) {
    const entry: ErrorEntry = declared;
    assert.match(code, /^[a-z0-9_]+$/, code);
    assert.ok((ERROR_KINDS as readonly string[]).includes(entry.kind), code);
    assert.ok(entry.meaning.length > 0, code);
    if (entry.status === undefined) assert.equal(typeof entry.rpc, 'number', `${code}: A2A-only needs rpc`);
    else assert.ok(entry.status >= 400 && entry.status < 600, `${code}: ${entry.status}`);
    if (entry.wireCode) assert.ok(entry.wireCodeShown, `${code}: a family shows its wire code`);
  }
});

test('every error_kind is the kind of some declared code', () => {
  const kinds = new Set(Object.values(ERROR_CATALOGUE).map((entry: ErrorEntry) => entry.kind));
  assert.deepEqual(
    ERROR_KINDS.filter((kind) => !kinds.has(kind)),
    [],
  );
});

test('apiError fills in the declaration: status, kind, template, Retry-After, the gate’s ok:false', () => {
  const revoked = apiError('token_revoked');
  assert.ok(revoked instanceof ApiError);
  assert.equal(revoked.status, 401);
  assert.deepEqual(revoked.body('req'), {
    error: 'token_revoked',
    error_kind: 'unauthorized',
    ok: false,
    message: 'The bearer token has been revoked.',
    request_id: 'req',
  });
  const busy = apiError('database_busy', { boundMs: 250 });
  assert.equal(busy.status, 503);
  assert.deepEqual(busy.headers(), { 'retry-after': '2' });
  assert.match(String(busy.body().message), /longer than 250 ms/);
  const signature = apiError('signature_verification_failed', { reason: 'nonce already used' });
  assert.equal(signature.code, 'signature verification failed: nonce already used');
  const framework = apiError('bad_request', { status: 406, message: 'Not acceptable.' });
  assert.equal(framework.status, 406);
  assert.deepEqual(errorBody('task_complete', { id: 't1', extra: { field: 'message.taskId' } }), {
    error: 'task_complete',
    error_kind: 'conflict',
    field: 'message.taskId',
    message: 'Task t1 is complete; send a new message without taskId.',
  });
});

test('tsc refuses an undeclared code, a missing template param and an undeclared extra field', () => {
  // Never run: the directives fail tsc (npx tsc --noEmit) if the lines stop being errors.
  const never = (): void => {
    // @ts-expect-error an undeclared code
    apiError('no_such_code');
    // @ts-expect-error upstream_timeout's template needs ms
    apiError('upstream_timeout');
    // @ts-expect-error sandbox_denied carries tier, not scope
    apiError('sandbox_denied', { extra: { scope: 'x' } });
    // @ts-expect-error a fixed message is not the throw site's to change
    apiError('token_revoked', { message: 'another' });
    // @ts-expect-error an A2A-only code has no HTTP status
    apiError('task_not_found', { message: 'x' });
  };
  assert.equal(typeof never, 'function');
});
