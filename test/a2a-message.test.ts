import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Role } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';

for (const engine of engines) {
  describe(`A2A message/send, raw and with the A2A SDK client (${engine.name})`, {
    skip: engine.skip,
  }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine: engine.name });
    });
    after(() => t?.close());

    test('message/send over raw JSON-RPC: a data part in, an A2A Message with a data part out', async () => {
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
      const message = response.body.result;
      assert.equal(message.kind, 'message');
      assert.equal(message.role, 'agent');
      assert.equal(message.contextId, 'ctx-1');
      assert.equal(typeof message.messageId, 'string');
      assert.equal(message.parts[0].kind, 'data');
      assert.equal(message.parts[0].data.job_id, id);
      assert.equal(message.parts[0].data.status, 'pending');
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
      assert.equal(noData.body.error.code, -32602, noData.text);
    });

    test('the A2A SDK client discovers the card and calls a capability with message/send', async () => {
      const member = await t.member('core');
      const token = await t.token(member, ['events:submit_recap']);
      const clientFor = (bearer?: string) => {
        const fetchImpl: typeof fetch = (input, init) =>
          fetch(input, {
            ...init,
            headers: {
              ...(init?.headers as Record<string, string>),
              ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
            },
          });
        const factory = new ClientFactory(
          ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
            transports: [new JsonRpcTransportFactory({ legacyCompat: { enabled: true }, fetchImpl })],
            cardResolver: new DefaultAgentCardResolver({ legacyCompat: { enabled: true } }),
          }),
        );
        return factory.createFromUrl(t.baseUrl);
      };
      const request = (value: unknown) => ({
        tenant: '',
        configuration: undefined,
        metadata: undefined,
        message: {
          messageId: randomUUID(),
          contextId: '',
          taskId: '',
          role: Role.ROLE_USER,
          parts: [
            { content: { $case: 'data' as const, value }, metadata: undefined, filename: '', mediaType: '' },
          ],
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        },
      });
      const id = `2026-07-16-sdk-${randomUUID().slice(0, 8)}`;
      const client = await clientFor(token);
      const result = await client.sendMessage(
        request({ capability: 'ic_highlights_submit', arguments: { id } }),
      );
      assert.ok('messageId' in result && 'parts' in result, JSON.stringify(result));
      assert.equal(result.role, Role.ROLE_AGENT);
      const content = result.parts[0].content;
      assert.equal(content?.$case, 'data');
      assert.equal(content.value.job_id, id);
      const row = await t.deps.db
        .selectFrom('highlights')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirst();
      assert.equal(row?.member_id, member.id);

      const anonymous = await clientFor();
      await assert.rejects(
        anonymous.sendMessage(request({ capability: 'ic_highlights_submit', arguments: { id: `${id}-x` } })),
        (error: { envelopeCode?: number; data?: { error_kind?: string } }) => {
          assert.equal(error.envelopeCode, -32001);
          assert.equal(error.data?.error_kind, 'unauthorized');
          return true;
        },
      );
    });
  });
}
