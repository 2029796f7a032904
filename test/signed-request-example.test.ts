import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { createSession, SESSION_COOKIE } from '../src/domain/auth/sessions.ts';
import { startTestApp, type TestApp } from './support/app.ts';

const run = promisify(execFile);
const SCRIPT = join(import.meta.dirname, '..', 'docs', 'examples', 'signed-request.mjs');

/** The worked example of docs/signed-requests.md, run as an agent developer would run it. */
describe('docs/examples/signed-request.mjs', () => {
  let t: TestApp;
  let dir: string;
  before(async () => {
    t = await startTestApp();
    // The script signs with the real time.
    t.clock.set(Date.now());
    dir = mkdtempSync(join(tmpdir(), 'signed-example-'));
  });
  after(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('keygen, bind the printed JWK, enforce, then signed GET and POST pass', async () => {
    const keyFile = join(dir, 'agent-key.pem');
    const made = JSON.parse((await run(process.execPath, [SCRIPT, 'keygen', keyFile])).stdout);
    assert.match(made.key_id, /^kid_[A-Za-z0-9_-]{43}$/);
    const member = await t.member('core');
    const token = await t.token(member, ['membership:read', 'leaderboard:manage']);
    const [{ id }] = await t.deps.db
      .selectFrom('tokens')
      .select('id')
      .where('member_id', '=', member.id)
      .execute();
    const headers = { cookie: `${SESSION_COOKIE}=${await createSession(t.deps.db, t.clock, member.id)}` };
    const bound = await t.call('POST', '/api/agent/keys/register', {
      headers,
      body: { token_id: id, jwk: made.jwk },
    });
    assert.equal(bound.body.key_id, made.key_id, 'the script computes the key id the service assigns');
    await t.call('POST', '/api/agent/keys/enforce-toggle', {
      headers,
      body: { token_id: id, enforce: true },
    });

    const env = { ...process.env, AGENT_COMMONS_TOKEN: token, AGENT_COMMONS_KEY: keyFile };
    const get = await run(process.execPath, [SCRIPT, 'GET', `${t.baseUrl}/api/activity/me?limit=3`], { env });
    assert.equal(get.stdout.split('\n')[0], '200', get.stdout);
    const post = await run(
      process.execPath,
      [SCRIPT, 'POST', `${t.baseUrl}/api/leaderboard/optin`, '{"optIn":false}'],
      {
        env,
      },
    );
    assert.equal(post.stdout.split('\n')[0], '200', post.stdout);
    const unsigned = await t.call('GET', '/api/activity/me', { token });
    assert.equal(unsigned.status, 401);
  });
});
