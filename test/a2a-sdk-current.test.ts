import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Role, TaskState } from '@a2a-js/sdk';
import { type Client, ClientFactory } from '@a2a-js/sdk/client';
import {
  JsonRpcRequestMalformedError,
  JsonRpcTaskNotFoundError,
  JsonRpcTransportError,
} from '@a2a-js/sdk/errors';
import { errorBody, freshStory, refusals, refuseTaskRows, storedStory } from './support/a2a.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';

type Content = { $case: 'data'; value: unknown } | { $case: 'text'; value: string };

/** A SendMessageRequest as the SDK types it (1.0: parts tell their type by member). */
function request(content: Content) {
  return {
    tenant: '',
    configuration: undefined,
    metadata: undefined,
    message: {
      messageId: randomUUID(),
      contextId: '',
      taskId: '',
      role: Role.ROLE_USER,
      parts: [{ content, metadata: undefined, filename: '', mediaType: '' }],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
  } as Parameters<Client['sendMessage']>[0];
}
const call = (capability: string, args: unknown) =>
  request({ $case: 'data', value: { capability, arguments: args } });
/** The token goes as a service parameter (an HTTP header): the factory stays at its defaults. */
const bearer = (token?: string) =>
  token ? { serviceParameters: { Authorization: `Bearer ${token}` } } : undefined;

function resultOf(answer: Awaited<ReturnType<Client['sendMessage']>>) {
  assert.ok('status' in answer, `a Task: ${JSON.stringify(answer)}`);
  assert.equal(answer.status?.state, TaskState.TASK_STATE_COMPLETED);
  const content = answer.artifacts[0].parts[0].content;
  assert.equal(content?.$case, 'data');
  return { task: answer, body: content.value as Record<string, any> };
}

for (const engine of engines) {
  describe(`A2A 1.0 with @a2a-js/sdk 1.3.0 at its defaults (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    let client: Client;
    before(async () => {
      t = await startTestApp({ engine: engine.name });
      client = await new ClientFactory().createFromUrl(t.baseUrl);
    });
    after(() => t?.close());

    test('card discovery picks the 1.0 JSON-RPC interface', async () => {
      assert.equal(client.protocolVersion, '1.0');
      const card = await client.getAgentCard();
      assert.equal(card.supportedInterfaces[0].protocolVersion, '1.0');
      assert.equal(card.capabilities?.streaming, false);
      assert.ok(card.skills.some((s) => s.id === 'ic_highlights_submit'));
    });

    test('a result whose task cannot be kept arrives as a Message the SDK reads', async () => {
      const member = await t.member('core');
      const token = await t.token(member, ['feedback:submit']);
      const allow = await refuseTaskRows(t);
      try {
        const answer = await client.sendMessage(
          call('ic_feedback_submit', { message: 'read by the SDK' }),
          bearer(token),
        );
        assert.ok('messageId' in answer && !('status' in answer), JSON.stringify(answer));
        assert.equal(answer.role, Role.ROLE_AGENT);
        assert.equal(answer.taskId, '');
        const content = answer.parts[0].content;
        assert.equal(content?.$case, 'data');
        const body = content.value as Record<string, any>;
        assert.equal(body.ok, true);
        const stored = await t.deps.db
          .selectFrom('feedback')
          .select(['message', 'member_id'])
          .where('ticket_id', '=', body.ticket_id)
          .execute();
        assert.deepEqual(stored, [{ message: 'read by the SDK', member_id: member.id }]);
      } finally {
        await allow();
      }
    });

    test('a public skill, a bearer skill, then GetTask and ListTasks of the result', async () => {
      const health = resultOf(await client.sendMessage(call('ic_health', {})));
      assert.equal(health.body.ok, true, JSON.stringify(health.body));
      const member = await t.member('core');
      const token = await t.token(member, ['events:submit_recap']);
      const story = freshStory('sdk1');
      const { task, body } = resultOf(
        await client.sendMessage(call('ic_highlights_submit', story), bearer(token)),
      );
      assert.equal(body.job_id, story.id);
      assert.equal((await storedStory(t, story.id))?.id, story.id);
      const stored = await t.deps.db
        .selectFrom('a2a_tasks')
        .selectAll()
        .where('id', '=', task.id)
        .executeTakeFirst();
      assert.equal(stored?.member_id, member.id);

      const read = await client.getTask({ tenant: '', id: task.id, historyLength: undefined }, bearer(token));
      assert.equal(read.id, task.id);
      assert.deepEqual(resultOf(read).body, body);
      const listed = await client.listTasks(
        {
          tenant: '',
          contextId: task.contextId,
          status: TaskState.TASK_STATE_COMPLETED,
          pageSize: 10,
          pageToken: '',
          historyLength: undefined,
          statusTimestampAfter: undefined,
          includeArtifacts: true,
        },
        bearer(token),
      );
      assert.deepEqual(
        listed.tasks.map((x) => x.id),
        [task.id],
      );
      assert.deepEqual(resultOf(listed.tasks[0]).body, body);
      assert.equal(listed.nextPageToken, '');

      const other = await t.token(await t.member('core'), ['events:submit_recap']);
      await assert.rejects(
        client.getTask({ tenant: '', id: task.id, historyLength: undefined }, bearer(other)),
        (error) => {
          assert.ok(error instanceof JsonRpcTaskNotFoundError, String(error));
          assert.match(error.message, /No task .* is kept for this member/);
          return true;
        },
      );
    });

    test('a plain-text message gets the skills; a text naming a skill with JSON arguments runs it', async () => {
      const help = await client.sendMessage(request({ $case: 'text', value: 'Hello, agent!' }));
      assert.ok('messageId' in help && 'parts' in help, JSON.stringify(help));
      assert.equal(help.role, Role.ROLE_AGENT);
      const text = help.parts[0].content;
      assert.equal(text?.$case, 'text');
      assert.match(text.value, /ic_highlights_submit/);
      const data = help.parts[1].content;
      assert.equal(data?.$case, 'data');
      assert.deepEqual((data.value as any).data_part_form, { capability: '<skill id>', arguments: {} });

      const routed = resultOf(await client.sendMessage(request({ $case: 'text', value: 'ic_health {}' })));
      assert.equal(routed.body.ok, true);
    });

    test('each refusal raises the SDK error class for its code, with our message', async () => {
      const { cases, spendQuota } = await refusals(t);
      for (const refusal of [...cases, await spendQuota()]) {
        await assert.rejects(
          client.sendMessage(call(refusal.capability, refusal.args), bearer(refusal.token)),
          (error) => {
            const expected = refusal.code === -32602 ? JsonRpcRequestMalformedError : JsonRpcTransportError;
            assert.ok(error instanceof expected, `${refusal.name}: ${error}`);
            const { envelopeCode, data } = error as InstanceType<typeof JsonRpcTransportError>;
            assert.equal(envelopeCode, refusal.code, refusal.name);
            const body = errorBody(data);
            assert.equal(body?.error, refusal.error, `${refusal.name}: ${JSON.stringify(data)}`);
            assert.equal(error.message, body?.message, `${refusal.name}: our message, intact`);
            return true;
          },
        );
        if (refusal.storyId) assert.equal(await storedStory(t, refusal.storyId), undefined, refusal.name);
      }
    });
  });
}
