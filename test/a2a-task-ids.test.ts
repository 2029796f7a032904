import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { toApiError } from '../src/core/errors.ts';
import { a2aClient, errorBody } from './support/a2a.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';
import { hostile, jsonText } from './support/fuzz.ts';

// The identifiers the A2A task methods take from a request (task ids, context ids, page tokens)
// are judged before any query: PostgreSQL's text refuses U+0000, and an id that cannot be one this
// server gave names no task. A malformed task id is TaskNotFoundError (-32001), as an unknown one;
// a malformed filter or context id is invalid params (-32602). Never -32603, never a logged error.

const SECONDS = Number(process.env.FUZZ_TEST_SECONDS ?? 25) / 2;
const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);

/** A cursor as ListTasks writes one (base64url of `updatedAt:id`), around any text. */
const cursor = (text: string) => Buffer.from(text).toString('base64url');

for (const engine of engines) {
  describe(`A2A task methods: identifiers judged before storage (${engine.name})`, {
    skip: engine.skip,
  }, () => {
    let t: TestApp;
    const errorLines: string[] = [];
    let token: string;
    let memberId: string;
    before(async () => {
      const logStream = new Writable({
        write(chunk, _encoding, done) {
          for (const line of String(chunk).split('\n'))
            if (line && (JSON.parse(line) as { level: number }).level >= 50) errorLines.push(line);
          done();
        },
      });
      t = await startTestApp({
        engine: engine.name,
        logStream,
        limits: { anonymousPerMinute: 1e9, tokenPerMinute: 1e9, feedbackPerHour: 1e9 },
      });
      const member = await t.member('core');
      memberId = member.id;
      token = await t.token(member, ['feedback:submit']);
    });
    after(() => t?.close());

    const v1 = a2aClient(() => t, { 'a2a-version': '1.0' });
    const v03 = a2aClient(() => t, { 'a2a-version': '0.3' });
    const feedbackCount = async () =>
      Number(
        (
          await t.deps.db
            .selectFrom('feedback')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );

    test('a task id that cannot be one is TaskNotFoundError on both wires, and nothing is logged', async () => {
      const ids = ['\u0000', `${randomUUID()}\u0000`, 'x'.repeat(10_000), '😀', '\ud800', 'é'];
      for (const id of ids) {
        for (const [client, method] of [
          [v1, 'GetTask'],
          [v1, 'CancelTask'],
          [v03, 'tasks/get'],
          [v03, 'tasks/cancel'],
        ] as const) {
          const answer = await client.rpc(method, { id }, token);
          const label = `${method} ${JSON.stringify(id.slice(0, 20))}`;
          assert.equal(answer.status, 200, label);
          assert.equal(answer.body.error?.code, -32001, `${label}: ${answer.text.slice(0, 300)}`);
          assert.equal(errorBody(answer.body.error.data)?.error, 'task_not_found', label);
          assert.ok(answer.text.length < 2000, `${label}: the id is not echoed`);
        }
      }
      assert.deepEqual(errorLines, []);
    });

    test('ListTasks refuses a context id or page token that cannot be one as invalid params', async () => {
      for (const params of [
        { contextId: '\u0000' },
        { contextId: `ctx\u0000` },
        { contextId: 'x'.repeat(10_000) },
        { contextId: '\ud800' },
        { pageToken: cursor('1:\u0000') },
        { pageToken: cursor(`1:${randomUUID()}\u0000`) },
        { pageToken: cursor('99999999999999999999999:x') },
        { pageToken: 'x'.repeat(10_000) },
        { status: ['TASK_STATE_COMPLETED'] },
      ]) {
        const answer = await v1.rpc('ListTasks', params, token);
        const label = JSON.stringify(params).slice(0, 80);
        assert.equal(answer.body.error?.code, -32602, `${label}: ${answer.text.slice(0, 300)}`);
        assert.equal(errorBody(answer.body.error.data)?.error, 'invalid_params', label);
      }
      // Turned into a string, an array this deep overflows the stack: sent as text, JSON.stringify cannot write it.
      const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
      const answer = await t.call('POST', '/api/a2a', {
        rawBody: `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"status":${deep}}}`,
        token,
        headers: { 'a2a-version': '1.0', 'content-type': 'application/json' },
      });
      assert.equal(answer.body.error?.code, -32602, answer.text.slice(0, 300));
      assert.deepEqual(errorLines, []);
    });

    test('SendMessage with a context id that cannot be kept is refused before the skill runs', async () => {
      const before = await feedbackCount();
      for (const contextId of ['\u0000', 'x'.repeat(10_000), 'a\u0000b']) {
        for (const [client, method] of [
          [v1, 'SendMessage'],
          [v03, 'message/send'],
        ] as const) {
          const answer = await client.rpc(
            method,
            {
              message: {
                messageId: randomUUID(),
                role: method === 'SendMessage' ? 'ROLE_USER' : 'user',
                contextId,
                parts: [
                  { kind: 'data', data: { capability: 'ic_feedback_submit', arguments: { message: 'x' } } },
                ],
              },
            },
            token,
          );
          assert.equal(answer.body.error?.code, -32602, `${method}: ${answer.text.slice(0, 300)}`);
          assert.equal(errorBody(answer.body.error.data)?.field, 'message.contextId');
        }
      }
      assert.equal(await feedbackCount(), before, 'a refused message filed no feedback');
      assert.deepEqual(errorLines, []);
    });

    test('a context id a client names is kept and found again', async () => {
      const contextId = `client-named ${randomUUID()}`;
      const sent = await v1.rpc(
        'SendMessage',
        {
          message: {
            messageId: randomUUID(),
            role: 'ROLE_USER',
            contextId,
            parts: [{ data: { capability: 'ic_health', arguments: {} } }],
          },
        },
        token,
      );
      const task = sent.body.result?.task;
      assert.equal(task?.contextId, contextId, sent.text);
      const listed = await v1.rpc('ListTasks', { contextId }, token);
      assert.deepEqual(
        listed.body.result.tasks.map((row: { id: string }) => row.id),
        [task.id],
      );
      const got = await v1.rpc('GetTask', { id: task.id }, token);
      assert.equal(got.body.result?.id, task.id);
      const rows = await t.deps.db
        .selectFrom('a2a_tasks')
        .select('id')
        .where('member_id', '=', memberId)
        .execute();
      assert.ok(rows.some((row) => row.id === task.id));
    });

    test('a value the database refuses to store is a 400, never a 500', {
      skip: engine.name !== 'postgres',
    }, async () => {
      const refused = await t.deps.db
        .selectFrom('a2a_tasks')
        .selectAll()
        .where('context_id', '=', '\u0000')
        .execute()
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      assert.equal((refused as { code?: string }).code, '22021');
      const answer = toApiError(refused);
      assert.equal(answer.status, 400);
      assert.equal(answer.kind, 'validation');
    });

    test(`fuzz: generated params for every task method, up to ${SECONDS} s, seed ${seed}`, {
      timeout: (SECONDS + 60) * 1000,
    }, async () => {
      const kept = await v1.rpc('ListTasks', {}, token);
      const knownId = kept.body.result?.tasks?.[0]?.id ?? randomUUID();
      const idLike = fc.oneof(
        fc.constant(knownId),
        fc.uuid(),
        hostile,
        fc.constantFrom('\u0000', `${knownId}\u0000`, knownId.toUpperCase(), ''),
      );
      const tokenLike = fc.oneof(
        hostile,
        fc
          .tuple(fc.oneof(fc.nat(), fc.constant(-1), fc.constant(1e30)), idLike)
          .map(([at, id]) => cursor(`${at}:${typeof id === 'string' ? id : jsonText(id)}`)),
      );
      const call = fc.oneof(
        fc.record({
          version: fc.constantFrom('1.0', '0.3'),
          method: fc.constantFrom('GetTask', 'CancelTask', 'tasks/get', 'tasks/cancel'),
          params: fc.record({ id: idLike, historyLength: fc.option(hostile) }, { requiredKeys: ['id'] }),
        }),
        fc.record({
          version: fc.constant('1.0'),
          method: fc.constant('ListTasks'),
          params: fc.record(
            {
              contextId: idLike,
              pageToken: tokenLike,
              pageSize: fc.oneof(fc.integer({ min: 1, max: 100 }), hostile),
              status: fc.oneof(fc.constant('TASK_STATE_COMPLETED'), hostile),
              statusTimestampAfter: fc.oneof(
                fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
                hostile,
              ),
              includeArtifacts: hostile,
            },
            { requiredKeys: [] },
          ),
        }),
        fc.record({
          version: fc.constantFrom('1.0', '0.3'),
          method: fc.constant('send'),
          params: fc.record({ contextId: idLike, taskId: fc.option(idLike) }),
        }),
      );
      let tried = 0;
      await fc.assert(
        fc.asyncProperty(call, fc.boolean(), async ({ version, method, params }, withToken) => {
          tried++;
          let body: string;
          if (method === 'send') {
            const message = {
              messageId: randomUUID(),
              role: version === '1.0' ? 'ROLE_USER' : 'user',
              contextId: params.contextId,
              ...(params.taskId === null ? {} : { taskId: params.taskId }),
              parts: [{ kind: 'data', data: { capability: 'ic_health', arguments: {} } }],
            };
            body = `{"jsonrpc":"2.0","id":1,"method":${JSON.stringify(version === '1.0' ? 'SendMessage' : 'message/send')},"params":{"message":${jsonText(message)}}}`;
          } else {
            body = `{"jsonrpc":"2.0","id":1,"method":${JSON.stringify(method)},"params":${jsonText(params)}}`;
          }
          const logged = errorLines.length;
          const response = await fetch(`${t.baseUrl}/api/a2a`, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'a2a-version': version,
              ...(withToken ? { authorization: `Bearer ${token}` } : {}),
            },
            body,
          });
          const text = await response.text();
          assert.ok(response.status < 500, `HTTP ${response.status}: ${text.slice(0, 300)}`);
          assert.ok(!text.includes('"code":-32603'), `internal error: ${text.slice(0, 300)}`);
          assert.equal(errorLines.length, logged, errorLines.slice(logged).join('\n').slice(0, 600));
        }),
        { seed, numRuns: 20_000, interruptAfterTimeLimit: SECONDS * 1000, markInterruptAsFailure: false },
      );
      assert.ok(tried >= 50, `only ${tried} calls`);
    });
  });
}
