import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Message, MessageSendParams, Task } from 'a2a-sdk-03';
import { type Client, ClientFactory, TaskNotFoundError } from 'a2a-sdk-03/client';
import { errorBody, freshStory, refusals, storedStory } from './support/a2a.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';

/** A 0.3 message/send: parts tagged with `kind`. */
function request(
  part: { kind: 'data'; data: Record<string, unknown> } | { kind: 'text'; text: string },
): MessageSendParams {
  return { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [part] } };
}
const call = (capability: string, args: unknown) =>
  request({ kind: 'data', data: { capability, arguments: args } });
/** The token goes as a service parameter (an HTTP header): the factory stays at its defaults. */
const bearer = (token?: string) =>
  token ? { serviceParameters: { Authorization: `Bearer ${token}` } } : undefined;

function resultOf(answer: Task | Message) {
  assert.equal(answer.kind, 'task', JSON.stringify(answer));
  const task = answer as Task;
  assert.equal(task.status.state, 'completed');
  const part = task.artifacts?.[0].parts[0];
  assert.equal(part?.kind, 'data');
  return { task, body: part.data as Record<string, any> };
}

/** What SDK 0.3.14 raises for a code it has no class for: its JSON-RPC transport error, our error inside. */
interface LegacyTransportError extends Error {
  errorResponse: { error: { code: number; message: string; data?: unknown } };
}

for (const engine of engines) {
  describe(`A2A 0.3 with @a2a-js/sdk 0.3.14 at its defaults (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    let client: Client;
    before(async () => {
      t = await startTestApp({ engine: engine.name });
      client = await new ClientFactory().createFromUrl(t.baseUrl);
    });
    after(() => t?.close());

    test('card discovery: the 0.3 fields name the JSON-RPC endpoint', async () => {
      const card = await client.getAgentCard();
      assert.equal(card.url, `${t.baseUrl}/api/a2a`);
      assert.equal(card.preferredTransport, 'JSONRPC');
      assert.equal(card.capabilities.streaming, false);
      assert.equal(card.securitySchemes?.agentBearer.type, 'http');
    });

    test('a public skill, a bearer skill, then tasks/get of the result', async () => {
      const health = resultOf(await client.sendMessage(call('ic_health', {})));
      assert.equal(health.body.ok, true, JSON.stringify(health.body));
      const member = await t.member('core');
      const token = await t.token(member, ['events:submit_recap']);
      const story = freshStory('sdk03');
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

      const read = await client.getTask({ id: task.id }, bearer(token));
      assert.equal(read.id, task.id);
      assert.deepEqual(resultOf(read).body, body);

      const other = await t.token(await t.member('core'), ['events:submit_recap']);
      await assert.rejects(client.getTask({ id: task.id }, bearer(other)), (error) => {
        assert.ok(error instanceof TaskNotFoundError, String(error));
        // 0.3.14 puts its own words in `message` for A2A's codes; ours stay in the response it keeps.
        const response = (error as unknown as LegacyTransportError).errorResponse;
        assert.equal(response.error.code, -32001);
        assert.match(response.error.message, /No task .* is kept for this member/);
        return true;
      });
    });

    test('a plain-text message (the SDK README’s) gets the skills; a text naming a skill runs it', async () => {
      const help = await client.sendMessage(request({ kind: 'text', text: 'Hello, agent!' }));
      assert.equal(help.kind, 'message', JSON.stringify(help));
      const [text, data] = (help as Message).parts;
      assert.equal(text.kind, 'text');
      assert.match(text.text, /ic_highlights_submit/);
      assert.equal(data.kind, 'data');
      assert.deepEqual(data.data.example, { capability: 'ic_signal_get_latest', arguments: {} });

      const routed = resultOf(
        await client.sendMessage(
          request({ kind: 'text', text: '{"capability": "ic_health", "arguments": {}}' }),
        ),
      );
      assert.equal(routed.body.ok, true);
    });

    test('each refusal raises the SDK’s JSON-RPC error with our message and Error body', async () => {
      const { cases, spendQuota } = await refusals(t);
      for (const refusal of [...cases, await spendQuota()]) {
        await assert.rejects(
          client.sendMessage(call(refusal.capability, refusal.args), bearer(refusal.token)),
          (error) => {
            assert.equal(error?.constructor?.name, 'JSONRPCTransportError', `${refusal.name}: ${error}`);
            const { errorResponse } = error as LegacyTransportError;
            assert.equal(errorResponse.error.code, refusal.code, refusal.name);
            const body = errorBody(errorResponse.error.data);
            assert.equal(body?.error, refusal.error, `${refusal.name}: ${JSON.stringify(errorResponse)}`);
            assert.equal(errorResponse.error.message, body?.message, `${refusal.name}: our message, intact`);
            assert.ok((error as Error).message.includes(String(body?.message)), refusal.name);
            return true;
          },
        );
        if (refusal.storyId) assert.equal(await storedStory(t, refusal.storyId), undefined, refusal.name);
      }
    });
  });
}
