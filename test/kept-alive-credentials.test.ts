// One kept-alive connection carrying several credentials in turn: the pipeline remembers the
// bearer and the session a connection presented last, with their digests
// (src/operations/pipeline/connection-credentials.ts), so these tests hold every request to one
// socket and check that what it remembers never decides an answer: each token and each session is
// answered as its own, a revocation or sign-out counts from the next request, and a bad header is
// refused as on a fresh connection.
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import type { Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createSession, revokeSession, SESSION_COOKIE } from '../src/domain/auth/sessions.ts';
import { sha256 } from '../src/secrets.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';

interface Answer {
  status: number;
  body: any;
  socket: Socket;
}

/** A client with one socket, kept alive: every request it sends goes on the same connection. */
function oneConnection(baseUrl: string) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const send = (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
    new Promise<Answer>((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const sent = request(
        new URL(path, baseUrl),
        {
          method,
          agent,
          headers: payload ? { ...headers, 'content-type': 'application/json' } : headers,
        },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk) => {
            text += chunk;
          });
          response.on('end', () =>
            resolve({
              status: response.statusCode ?? 0,
              body: JSON.parse(text),
              socket: sent.socket as Socket,
            }),
          );
        },
      );
      sent.on('error', reject);
      sent.end(payload);
    });
  return { send, close: () => agent.destroy() };
}

for (const engine of engines)
  describe(`credentials in turn on one kept-alive connection (${engine.name})`, {
    skip: engine.skip,
    concurrency: 1,
  }, () => {
    let t: TestApp;
    let client: ReturnType<typeof oneConnection>;
    before(async () => {
      t = await startTestApp({ engine: engine.name });
      client = oneConnection(t.baseUrl);
    });
    after(async () => {
      client?.close();
      await t?.close();
    });

    const setupCheck = (authorization: string) =>
      client.send('GET', '/api/agent/setup-check', { authorization });

    test('each token is answered as its own, whichever the connection sent before', async () => {
      const [ada, bea] = [await t.member('core', 'Ada'), await t.member('resident', 'Bea')];
      const [adaToken, beaToken] = [await t.token(ada, ['read:public']), await t.token(bea, ['read:public'])];
      const answers: Answer[] = [];
      for (const [authorization, member] of [
        [`Bearer ${adaToken}`, ada],
        [`Bearer ${adaToken}`, ada],
        [`Bearer ${beaToken}`, bea],
        [`bearer ${adaToken}  `, ada],
        [`Bearer ${beaToken}`, bea],
      ] as const) {
        const answer = await setupCheck(authorization);
        assert.equal(answer.status, 200);
        assert.equal(answer.body.ready, true);
        assert.equal(answer.body.checks.member_id, member.id, authorization);
        assert.equal(answer.body.checks.member_name, member.name);
        assert.equal(answer.body.checks.tier, member.tier);
        answers.push(answer);
      }
      assert.ok(
        answers.every((answer) => answer.socket === answers[0].socket),
        'every request went on one connection',
      );
    });

    test('a revocation counts from the next request on the connection that used the token', async () => {
      const member = await t.member('core');
      const token = await t.token(member, ['read:public', 'events:submit_recap']);
      const kept = await client.send('GET', '/api/ingest/highlights/pending', {
        authorization: `Bearer ${token}`,
      });
      assert.equal(kept.status, 200);
      // Revoked through another connection (fetch's own), as another client of the member would.
      assert.equal((await t.call('POST', '/api/agent/token/revoke', { token })).status, 200);
      const stored = await t.deps.db
        .selectFrom('tokens')
        .select('revoked_at')
        .where('member_id', '=', member.id)
        .executeTakeFirstOrThrow();
      assert.notEqual(stored.revoked_at, null);
      const refused = await client.send('GET', '/api/ingest/highlights/pending', {
        authorization: `Bearer ${token}`,
      });
      assert.equal(refused.status, 401);
      assert.equal(refused.body.error, 'token_revoked');
      assert.equal(refused.socket, kept.socket, 'the same connection');
      const checked = await setupCheck(`Bearer ${token}`);
      assert.equal(checked.body.ready, false);
      assert.equal(checked.body.checks.token, 'token_revoked');
    });

    test('each session is answered as its own, and a sign-out counts from the next request', async () => {
      const [ada, bea] = [await t.member('core', 'Ada Session'), await t.member('resident', 'Bea Session')];
      const [adaSession, beaSession] = [
        await createSession(t.deps.db, t.clock, ada.id),
        await createSession(t.deps.db, t.clock, bea.id),
      ];
      const tierMe = (session: string) =>
        client.send('GET', '/api/tier/me', { cookie: `${SESSION_COOKIE}=${session}` });
      const answers: Answer[] = [];
      for (const [session, member] of [
        [adaSession, ada],
        [adaSession, ada],
        [beaSession, bea],
        [adaSession, ada],
      ] as const) {
        const answer = await tierMe(session);
        assert.equal(answer.status, 200);
        assert.equal(answer.body.email, member.email);
        assert.equal(answer.body.display_name, member.name);
        assert.equal(answer.body.tier, member.tier);
        answers.push(answer);
      }
      await revokeSession(t.deps.db, t.clock, adaSession);
      const stored = await t.deps.db
        .selectFrom('sessions')
        .select('revoked_at')
        .where('id_hash', '=', sha256(adaSession))
        .executeTakeFirstOrThrow();
      assert.notEqual(stored.revoked_at, null);
      const refused = await tierMe(adaSession);
      assert.equal(refused.status, 401);
      assert.equal(refused.body.error, 'session_expired');
      const still = await tierMe(beaSession);
      assert.equal(still.status, 200);
      assert.equal(still.body.email, bea.email);
      assert.ok(
        [...answers, refused, still].every((answer) => answer.socket === answers[0].socket),
        'every request went on one connection',
      );
    });

    test('a bad header after a good one is refused as on a fresh connection', async () => {
      const member = await t.member('core');
      const token = await t.token(member, ['read:public', 'events:submit_recap']);
      const pending = (authorization: string) =>
        client.send('GET', '/api/ingest/highlights/pending', { authorization });
      assert.equal((await pending(`Bearer ${token}`)).status, 200);
      for (const [authorization, error] of [
        [`Bearer ${token}x`, 'invalid_token'],
        [`Bearer ${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`, 'invalid_token'],
        [`Basic ${token}`, 'invalid_authorization'],
        ['Bearer ', 'invalid_authorization'],
      ]) {
        const refused = await pending(authorization);
        assert.equal(refused.status, 401, authorization);
        assert.equal(refused.body.error, error, authorization);
      }
      assert.equal((await pending(`Bearer ${token}`)).status, 200);
    });
  });
