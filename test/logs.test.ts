import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { approveGrant } from '../src/domain/auth/device-grants.ts';
import { startTestApp } from './support/app.ts';

test('at the most verbose level, no token, device code, user code or session id reaches the log', async () => {
  const stream = new PassThrough();
  let log = '';
  stream.on('data', (chunk) => {
    log += chunk.toString();
  });
  const t = await startTestApp({ logStream: stream });
  try {
    const member = await t.member('core');
    const start = await t.call('POST', '/api/agent/signup/start', {
      body: { scopes: ['events:submit_recap'] },
    });
    const { device_code, user_code } = start.body;
    await t.call('GET', `/api/agent/signup/poll?device_code=${device_code}`);
    await approveGrant(t.deps, user_code, member.id);
    t.clock.advance(10_000);
    const done = await t.call('GET', `/api/agent/signup/poll?device_code=${device_code}`);
    const token = done.body.agent_token as string;
    assert.match(token, /^agt_/);
    await t.call('GET', '/api/agent/setup-check', { token });
    await t.call('POST', '/api/ingest/highlights/pending', { token, body: { id: 'log-check' } });
    await t.call('GET', '/api/ingest/highlights/pending?id=log-check', { token: `${token.slice(0, -2)}xx` });
    await t.call('GET', '/api/nope', { headers: { cookie: '__session=ses_secret_cookie_value' } });
    await t.call('POST', '/api/agent/token/revoke', { token });
    await new Promise((resolve) => setImmediate(resolve));
    assert.ok(log.includes('/api/agent/signup/poll'), 'the log did record the requests');
    for (const secret of [token, token.slice(4), device_code, user_code, 'ses_secret_cookie_value']) {
      assert.ok(!log.includes(secret), `secret found in the log: ${secret.slice(0, 8)}…`);
    }
  } finally {
    await t.close();
  }
});

for (const [level, expected] of [
  ['info', ['incoming request', 'request completed']],
  ['warn', []],
] as const)
  test(`at ${level}, Fastify's lines of a request: ${expected.join(', ') || 'none'}`, async () => {
    const stream = new PassThrough();
    let log = '';
    stream.on('data', (chunk) => {
      log += chunk.toString();
    });
    const t = await startTestApp({ logStream: stream, logLevel: level });
    try {
      await t.call('GET', '/api/events/upcoming');
      await t.call('GET', '/api/agent/setup-check', { token: `agt_${'x'.repeat(43)}` });
      await new Promise((resolve) => setImmediate(resolve));
      const messages = log
        .split('\n')
        .filter(Boolean)
        .map((line) => (JSON.parse(line) as { msg: string }).msg)
        .filter((msg) => !msg.startsWith('Server listening'));
      assert.deepEqual(messages, [...expected, ...expected]);
    } finally {
      await t.close();
    }
  });
