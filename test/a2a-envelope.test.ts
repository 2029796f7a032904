import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { a2aClient } from './support/a2a.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';

for (const engine of engines) {
  describe(`A2A JSON-RPC envelope (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine: engine.name });
    });
    after(() => t?.close());

    const { post, rpc, send } = a2aClient(() => t);

    test('envelope errors: parse error, invalid request, unknown method, bad params', async () => {
      const parse = await t.call('POST', '/api/a2a', {
        rawBody: '{"jsonrpc": "2.0", "method": ',
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(parse.status, 200, parse.text);
      assert.deepEqual(parse.body.id, null);
      assert.equal(parse.body.error.code, -32700);
      const empty = await t.call('POST', '/api/a2a', {
        rawBody: '',
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(empty.body.error.code, -32700, empty.text);

      const invalid = await post({ jsonrpc: '1.0', id: 7, method: 'agent/info' });
      assert.equal(invalid.body.error.code, -32600, invalid.text);
      assert.equal(invalid.body.id, 7);
      assert.equal((await post('just a string')).body.error.code, -32600);
      assert.equal((await post([])).body.error.code, -32600, 'an empty batch is invalid');

      const unknown = await rpc('tasks/nope', { id: 'x' }, undefined, 'u1');
      assert.equal(unknown.body.error.code, -32601, unknown.text);
      assert.equal(unknown.body.id, 'u1');
      const positional = await rpc('tasks/send', ['ic_highlights_submit', {}]);
      assert.equal(positional.body.error.code, -32602, positional.text);
    });

    test('a batch is answered as an array, with no entry for the notification (which still runs)', async () => {
      const message = `sent as a notification ${Math.random().toString(36).slice(2)}`;
      const response = await post([
        { jsonrpc: '2.0', id: 1, method: 'agent/info' },
        {
          jsonrpc: '2.0',
          method: 'tasks/send',
          params: { capability: 'ic_feedback_submit', arguments: { message } },
        },
        { jsonrpc: '2.0', id: 'two', method: 'no/such/method' },
      ]);
      assert.equal(response.status, 200, response.text);
      assert.ok(Array.isArray(response.body), response.text);
      assert.deepEqual(
        response.body.map((r: { id: unknown }) => r.id),
        [1, 'two'],
      );
      assert.equal(response.body[0].result.name, 'agent-commons');
      assert.equal(response.body[1].error.code, -32601);
      assert.equal(response.headers.get('ratelimit-policy'), null, 'a batch reply has no rate headers');
      const filed = await t.deps.db
        .selectFrom('feedback')
        .select('message')
        .where('message', '=', message)
        .execute();
      assert.equal(filed.length, 1, 'the notification filed its ticket');

      const onlyNotifications = await post([{ jsonrpc: '2.0', method: 'agent/info' }]);
      assert.equal(onlyNotifications.status, 204);
      assert.equal(onlyNotifications.text, '');
      const tooMany = Array.from({ length: 21 }, (_, id) => ({ jsonrpc: '2.0', id, method: 'agent/info' }));
      assert.equal((await post(tooMany)).body.error.code, -32600);
    });

    test('a batch with an entry refused for its credential stays 200 and still sends the challenge', async () => {
      const response = await post([
        { jsonrpc: '2.0', id: 1, method: 'agent/info' },
        {
          jsonrpc: '2.0',
          id: 2,
          method: 'tasks/send',
          params: { capability: 'ic_get_my_membership', arguments: {} },
        },
      ]);
      assert.equal(response.status, 200, response.text);
      assert.equal(response.body[0].result.name, 'agent-commons');
      assert.equal(response.body[1].error.code, -31401);
      assert.equal(response.body[1].error.data.error, 'missing_token');
      assert.match(response.headers.get('www-authenticate') ?? '', /resource_metadata=".*\/api\/a2a"/);
      const single = await send('ic_get_my_membership', {});
      assert.equal(single.status, 401, 'alone, the same refusal is an HTTP 401');
    });

    test('a body over the cap is a 413 in the spec Error shape', async () => {
      const response = await post({
        jsonrpc: '2.0',
        id: 1,
        method: 'agent/info',
        params: { pad: 'x'.repeat(400_000) },
      });
      assert.equal(response.status, 413, response.text);
      assert.equal(response.body.error, 'payload_too_large');
      assert.equal(response.body.error_kind, 'payload_too_large');
      const token = await t.token(await t.member('core'), ['feedback:submit']);
      const big = await send('ic_feedback_submit', { message: 'hi', pad: 'x'.repeat(20_000) }, token);
      assert.equal(big.body.error.code, -31413, big.text);
      assert.equal(big.body.error.data.error_kind, 'payload_too_large', 'the operation’s own cap applies');
    });
  });
}
