// The log of `serve`, as JSON lines and as pino-pretty's lines (LOG_FORMAT): one line per request,
// and none of what requests carry that must not be kept: bearer tokens, cookies, query strings
// (device codes), bodies (email addresses). (The start's own /healthz probes are not counted.)
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { freshDatabase } from './support/databases.ts';
import { killAllChildren, startServer } from './support/processes.ts';

const database = await freshDatabase('sqlite');
after(async () => {
  await killAllChildren();
  await database.drop();
});

const SECRETS = {
  token: `agt_${'S'.repeat(40)}`,
  cookie: 'session-cookie-value-that-must-not-be-logged',
  deviceCode: 'device-code-that-must-not-be-logged',
  email: 'secret-person@example.org',
};

describe('the log of serve', () => {
  for (const format of ['json', 'pretty'] as const) {
    test(`${format}: one line per request, no secret`, async () => {
      const server = await startServer(database.url, {
        env: { LOG_LEVEL: 'info', LOG_FORMAT: format, SEED_DEMO: 'false' },
      });
      const requests = [
        fetch(`${server.baseUrl}/api/agent/signup/poll?device_code=${SECRETS.deviceCode}`),
        fetch(`${server.baseUrl}/readyz`, {
          headers: { authorization: `Bearer ${SECRETS.token}`, cookie: `sid=${SECRETS.cookie}` },
        }),
        fetch(`${server.baseUrl}/api/ingest/highlights/pending`, {
          headers: { authorization: `Bearer ${SECRETS.token}` },
        }),
        fetch(`${server.baseUrl}/signin`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `sid=${SECRETS.cookie}` },
          body: `email=${encodeURIComponent(SECRETS.email)}`,
        }),
      ];
      for (const answer of await Promise.all(requests)) await answer.arrayBuffer();
      assert.equal((await server.kill('SIGTERM')).code, 0);
      const log = server.stdout() + server.stderr();
      for (const [name, secret] of Object.entries(SECRETS))
        assert.ok(!log.includes(secret), `no ${name} in the log`);
      for (const path of ['/api/agent/signup/poll', '/readyz', '/api/ingest/highlights/pending', '/signin']) {
        const lines = log
          .split('\n')
          .filter(
            (line) =>
              line.includes(`"path":"${path}"`) || new RegExp(`: (GET|POST) ${path} \\d{3} `).test(line),
          );
        assert.equal(lines.length, 1, `one line for ${path}: ${lines.join('\n')}`);
      }
      if (format === 'json') {
        const entry = log.split('\n').find((line) => line.includes('"/readyz"'))!;
        const parsed = JSON.parse(entry);
        assert.equal(parsed.msg, 'request completed');
        assert.deepEqual([parsed.req.method, parsed.res.statusCode], ['GET', 200]);
      } else {
        assert.match(log, /INFO: GET \/readyz 200 \d+ ms\n/);
        assert.doesNotMatch(log, /incoming request/);
      }
    });
  }
});
