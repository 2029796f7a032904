import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { MS } from '../src/clock.ts';
import { a2aClient, refuseTaskRows } from './support/a2a.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';

for (const engine of engines) {
  describe(`A2A tasks: listing, ownership and retention (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine: engine.name });
    });
    after(() => t?.close());

    const v1 = a2aClient(() => t, { 'a2a-version': '1.0' });
    const kept = (memberId: string) =>
      t.deps.db
        .selectFrom('a2a_tasks')
        .select(['id', 'expires_at'])
        .where('member_id', '=', memberId)
        .execute();
    /** One SendMessage of ic_health (public, so any token may call it); the task's id. */
    async function health(token: string | undefined, contextId?: string): Promise<string> {
      const sent = await v1.rpc(
        'SendMessage',
        {
          message: {
            messageId: randomUUID(),
            role: 'ROLE_USER',
            ...(contextId ? { contextId } : {}),
            parts: [{ data: { capability: 'ic_health', arguments: {} } }],
          },
        },
        token,
      );
      assert.equal(sent.body.result?.task?.status.state, 'TASK_STATE_COMPLETED', sent.text);
      return sent.body.result.task.id;
    }

    test('a task the database refuses to keep: the committed result is answered as a message, not an error', async () => {
      const ada = await t.member('core');
      const token = await t.token(ada, ['feedback:submit']);
      const allow = await refuseTaskRows(t);
      try {
        const contextId = randomUUID();
        const sent = await v1.rpc(
          'SendMessage',
          {
            message: {
              messageId: randomUUID(),
              role: 'ROLE_USER',
              contextId,
              parts: [{ data: { capability: 'ic_feedback_submit', arguments: { message: 'kept or not' } } }],
            },
          },
          token,
        );
        assert.equal(sent.status, 200, sent.text);
        assert.equal(sent.body.error, undefined, sent.text);
        const reply = sent.body.result.message;
        assert.equal(reply.role, 'ROLE_AGENT');
        assert.equal(reply.contextId, contextId);
        assert.equal(reply.taskId, undefined);
        const result = reply.parts[0].data;
        assert.equal(result.ok, true);
        // The feedback is stored once, and no task row is.
        const stored = await t.deps.db
          .selectFrom('feedback')
          .select(['ticket_id', 'message', 'member_id'])
          .where('ticket_id', '=', result.ticket_id)
          .execute();
        assert.deepEqual(
          stored.map((row) => [row.message, row.member_id]),
          [['kept or not', ada.id]],
        );
        assert.deepEqual(await kept(ada.id), []);
      } finally {
        await allow();
      }
    });

    test('ListTasks: the caller’s tasks only, newest first, by cursor, filtered by context', async () => {
      const ada = await t.member('core');
      const adaToken = await t.token(ada, ['read:public']);
      const bob = await t.member('core');
      const bobToken = await t.token(bob, ['read:public']);
      const ids: string[] = [];
      for (const context of ['ctx-a', 'ctx-a', 'ctx-b']) {
        ids.push(await health(adaToken, context));
        t.clock.advance(MS.second);
      }
      await health(bobToken, 'ctx-a');
      await health(undefined, 'ctx-a');
      assert.equal((await kept(ada.id)).length, 3);

      const first = await v1.rpc('ListTasks', { pageSize: 2 }, adaToken);
      assert.deepEqual(
        first.body.result.tasks.map((task: { id: string }) => task.id),
        [ids[2], ids[1]],
        first.text,
      );
      assert.equal(first.body.result.totalSize, 3);
      assert.equal(first.body.result.pageSize, 2);
      assert.equal(first.body.result.tasks[0].artifacts, undefined, 'artifacts only when asked for');
      assert.notEqual(first.body.result.nextPageToken, '');
      const second = await v1.rpc(
        'ListTasks',
        { pageSize: 2, pageToken: first.body.result.nextPageToken },
        adaToken,
      );
      assert.deepEqual(
        second.body.result.tasks.map((task: { id: string }) => task.id),
        [ids[0]],
      );
      assert.equal(second.body.result.nextPageToken, '');

      const inContext = await v1.rpc('ListTasks', { contextId: 'ctx-a', includeArtifacts: true }, adaToken);
      assert.deepEqual(
        inContext.body.result.tasks.map((task: { id: string }) => task.id),
        [ids[1], ids[0]],
      );
      assert.equal(inContext.body.result.tasks[0].artifacts[0].parts[0].data.ok, true);
      const bobs = await v1.rpc('ListTasks', {}, bobToken);
      assert.equal(bobs.body.result.totalSize, 1, 'another member sees only their own');

      const badToken = await v1.rpc('ListTasks', { pageToken: 'not-ours' }, adaToken);
      assert.equal(badToken.body.error.code, -32602, badToken.text);
      const anonymous = await v1.rpc('ListTasks', {});
      assert.equal(anonymous.status, 401);
      assert.equal(anonymous.body.error.code, -31401);
    });

    test('retention: a task is readable for 7 days, then gone, and the next task clears it', async () => {
      const member = await t.member('core');
      const token = await t.token(member, ['read:public']);
      const id = await health(token);
      const [row] = await kept(member.id);
      assert.equal(row.expires_at, t.clock.now() + 7 * MS.day);

      t.clock.advance(7 * MS.day - MS.second);
      assert.equal(
        (await v1.rpc('GetTask', { id }, token)).body.result?.id,
        id,
        'still kept a second before',
      );
      t.clock.advance(MS.second);
      const expired = await v1.rpc('GetTask', { id }, token);
      assert.equal(expired.body.error.code, -32001, expired.text);
      assert.match(expired.body.error.message, /7-day retention/);

      const next = await health(token);
      assert.deepEqual(
        (await kept(member.id)).map((r) => r.id),
        [next],
        'the expired row was deleted with the next insert',
      );
    });
  });
}
