import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { a2aClient, errorBody } from './support/a2a.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';

for (const engine of engines) {
  describe(`A2A messages and tasks over raw JSON-RPC, both versions (${engine.name})`, {
    skip: engine.skip,
  }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine: engine.name });
    });
    after(() => t?.close());
    const stored = (id: string) =>
      t.deps.db.selectFrom('highlights').selectAll().where('id', '=', id).executeTakeFirst();

    test('message/send over raw JSON-RPC (0.3): a data part in, a completed Task with the result out', async () => {
      const member = await t.member('core');
      const token = await t.token(member, ['events:submit_recap']);
      const id = `2026-07-16-message-${randomUUID().slice(0, 8)}`;
      const response = await t.call('POST', '/api/a2a', {
        token,
        body: {
          jsonrpc: '2.0',
          id: 'm1',
          method: 'message/send',
          params: {
            message: {
              kind: 'message',
              messageId: randomUUID(),
              role: 'user',
              contextId: 'ctx-1',
              parts: [{ kind: 'data', data: { capability: 'ic_highlights_submit', arguments: { id } } }],
            },
          },
        },
      });
      assert.equal(response.body.id, 'm1', response.text);
      assert.equal(response.headers.get('a2a-version'), '0.3', 'no A2A-Version header means 0.3');
      const task = response.body.result;
      assert.equal(task.kind, 'task');
      assert.equal(task.status.state, 'completed');
      assert.equal(task.contextId, 'ctx-1');
      assert.equal(typeof task.id, 'string');
      assert.equal(task.artifacts[0].parts[0].kind, 'data');
      assert.equal(task.artifacts[0].parts[0].data.job_id, id);
      assert.equal(task.artifacts[0].parts[0].data.status, 'pending');
      const kept = await t.deps.db
        .selectFrom('a2a_tasks')
        .selectAll()
        .where('id', '=', task.id)
        .executeTakeFirst();
      assert.equal(kept?.member_id, member.id);
      assert.equal(kept?.context_id, 'ctx-1');
      assert.equal(JSON.parse(kept?.result ?? 'null').job_id, id);
      const row = await t.deps.db
        .selectFrom('highlights')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirst();
      assert.equal(row?.member_id, member.id);

      const noData = await t.call('POST', '/api/a2a', {
        token,
        body: {
          jsonrpc: '2.0',
          id: 'm2',
          method: 'message/send',
          params: {
            message: { kind: 'message', messageId: 'x', role: 'user', parts: [{ kind: 'text', text: 'hi' }] },
          },
        },
      });
      // A text that names no skill is answered, not refused: a Message listing the skills.
      assert.equal(noData.body.result?.kind, 'message', noData.text);
      assert.equal(noData.body.result.parts[0].kind, 'text');
      assert.match(noData.body.result.parts[0].text, /ic_highlights_submit/);
    });

    test('SendMessage over raw JSON-RPC (A2A-Version 1.0): ProtoJSON in, a Task wrapped in `task` out', async () => {
      const member = await t.member('core');
      const token = await t.token(member, ['events:submit_recap']);
      const id = `2026-07-16-v1-${randomUUID().slice(0, 8)}`;
      const v1 = a2aClient(() => t, { 'a2a-version': '1.0' });
      const response = await v1.rpc(
        'SendMessage',
        {
          message: {
            messageId: randomUUID(),
            role: 'ROLE_USER',
            parts: [{ data: { capability: 'ic_highlights_submit', arguments: { id } } }],
          },
        },
        token,
      );
      assert.equal(response.status, 200, response.text);
      assert.equal(response.headers.get('a2a-version'), '1.0');
      const task = response.body.result.task;
      assert.equal(task.kind, undefined, '1.0 objects carry no kind');
      assert.equal(task.status.state, 'TASK_STATE_COMPLETED');
      assert.deepEqual(Object.keys(task.artifacts[0].parts[0]), ['data', 'mediaType']);
      assert.equal(task.artifacts[0].parts[0].data.job_id, id);
      assert.equal((await stored(id))?.member_id, member.id);

      // The same task, read back in either version's spelling by its member.
      const got = await v1.rpc('GetTask', { id: task.id }, token);
      assert.deepEqual(got.body.result, task);
      const legacy = await a2aClient(() => t).rpc('tasks/get', { id: task.id }, token);
      assert.equal(legacy.body.result.kind, 'task');
      assert.equal(legacy.body.result.status.state, 'completed');
      const cancel = await v1.rpc('CancelTask', { id: task.id }, token);
      assert.equal(cancel.body.error.code, -32002, cancel.text);
      const anonymous = await v1.rpc('GetTask', { id: task.id });
      assert.equal(anonymous.status, 401, anonymous.text);
      assert.equal(anonymous.body.error.code, -31401);
    });

    test('version negotiation: an unsupported version is -32009; a method of the other version is named', async () => {
      const unsupported = await a2aClient(() => t, { 'a2a-version': '0.5' }).rpc('SendMessage', {
        message: {},
      });
      assert.equal(unsupported.body.error.code, -32009, unsupported.text);
      assert.deepEqual(errorBody(unsupported.body.error.data)?.supported_versions, ['1.0', '0.3']);
      const patch = await t.call('POST', '/api/a2a?A2A-Version=1.0.3', {
        body: { jsonrpc: '2.0', id: 1, method: 'GetExtendedAgentCard' },
      });
      assert.equal(patch.headers.get('a2a-version'), '1.0', 'the query parameter, patch ignored');
      assert.equal(patch.body.error.code, -32004, patch.text);
      const wrong = await a2aClient(() => t).rpc('SendMessage', { message: {} });
      assert.equal(wrong.body.error.code, -32601);
      assert.match(wrong.body.error.message, /A2A-Version: 1\.0/);
      const stream = await a2aClient(() => t, { 'a2a-version': '1.0' }).rpc('SendStreamingMessage', {
        message: {},
      });
      assert.equal(stream.body.error.code, -32004, 'streaming is not offered');
      const push = await a2aClient(() => t).rpc('tasks/pushNotificationConfig/set', {});
      assert.equal(push.body.error.code, -32003);
    });
  });
}
