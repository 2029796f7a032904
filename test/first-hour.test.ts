import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { MS } from '../src/clock.ts';
import { approveGrant } from '../src/domain/auth/device-grants.ts';
import { seedDemoCommunity } from '../src/domain/demo/seed.ts';
import { refreshEvents } from '../src/domain/events/feed.ts';
import { sha256 } from '../src/secrets.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';
import { runCli } from './support/processes.ts';

/**
 * A newcomer's first hour, as the README tells it: the demo community, a device
 * grant approved by the member whose tier grants the scopes asked for, polling at the interval, and
 * a token that answers a research question; and what the CLI prints along the way.
 */
for (const engine of engines) {
  describe(`the first hour on the demo community (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    const demoMember = async (email: string) =>
      t.deps.db.selectFrom('members').selectAll().where('email', '=', email).executeTakeFirstOrThrow();
    before(async () => {
      t = await startTestApp({ engine: engine.name });
      await seedDemoCommunity(t.deps);
    });
    after(() => t?.close());

    test('the events refresh reports the demo events it serves, not stored:0', async () => {
      const report = await refreshEvents(t.deps);
      const upcoming = await t.call('GET', '/api/events/upcoming?limit=100');
      assert.equal(upcoming.status, 200, upcoming.text);
      assert.equal(upcoming.body.count, 3);
      assert.equal(report.source, 'local');
      assert.equal(report.served, 3, JSON.stringify(report));
    });

    test('the README flow: grant, approval as Rae, polling at the interval, setup-check', async () => {
      const started = await t.call('POST', '/api/agent/signup/start', {
        body: { scopes: ['read:public', 'events:rsvp', 'research:query'], client_name: 'my agent' },
      });
      assert.equal(started.status, 200, started.text);
      const { device_code, user_code, interval } = started.body;
      assert.match(user_code, /^[A-Z0-9]{4}-[A-Z0-9]{4}$/);
      assert.equal(typeof interval, 'number');
      const poll = () => t.call('GET', `/api/agent/signup/poll?device_code=${device_code}`);

      assert.equal((await poll()).body.status, 'pending');
      const tooSoon = await poll();
      assert.equal(tooSoon.status, 429, 'polling faster than interval is slowed down');
      assert.equal(tooSoon.body.error, 'slow_down');
      assert.ok(tooSoon.body.interval > interval, 'with a longer interval to keep');

      const rae = await demoMember('rae@demo.example.org');
      // What `device approve CODE --member ID` runs (in process: the grant lives on the test's clock).
      assert.equal((await approveGrant(t.deps, user_code, rae.id)).ok, true);

      t.clock.advance(tooSoon.body.interval * MS.second);
      const completed = await poll();
      assert.equal(completed.status, 200, completed.text);
      assert.equal(completed.body.status, 'completed');
      assert.equal(completed.body.tier, 'resident');
      assert.deepEqual(completed.body.denied_scopes, [], 'Rae’s tier grants every scope asked for');
      const token = completed.body.agent_token;
      t.clock.advance(tooSoon.body.interval * MS.second);
      assert.equal((await poll()).status, 410, 'delivered once');

      const setup = await t.call('GET', '/api/agent/setup-check', { token });
      assert.equal(setup.status, 200);
      assert.equal(setup.body.ready, true);
      assert.equal(setup.body.checks.member_id, rae.id);
    });

    test('approved by the public member, events:rsvp is dropped into denied_scopes', async () => {
      const started = await t.call('POST', '/api/agent/signup/start', {
        body: { scopes: ['read:public', 'events:rsvp'], client_name: 'my agent' },
      });
      const pat = await demoMember('pat@demo.example.org');
      assert.equal((await approveGrant(t.deps, started.body.user_code, pat.id)).ok, true);
      const completed = await t.call('GET', `/api/agent/signup/poll?device_code=${started.body.device_code}`);
      assert.equal(completed.body.status, 'completed', completed.text);
      assert.deepEqual(completed.body.granted_scopes, ['read:public']);
      assert.deepEqual(completed.body.denied_scopes, ['events:rsvp']);
    });

    test('research answers typical questions from the corpus shipped in the repository', async () => {
      const rae = await demoMember('rae@demo.example.org');
      const token = await t.token(rae, ['research:query']);
      const ask = (body: Record<string, unknown>) => t.call('POST', '/api/research/ask', { token, body });
      // The README's question: papers (the default source) include RFC 6749.
      // (Where Debian's SQLite articles are installed they are papers too: the RFC must still be found.)
      const refresh = await ask({ q: 'How does a client refresh an access token?', k: 3 });
      assert.equal(refresh.status, 200, refresh.text);
      assert.ok(
        refresh.body.results.some(
          (r: { title: string; section: string }) =>
            r.title === 'RFC 6749: The OAuth 2.0 Authorization Framework' && /Refresh/i.test(r.section),
        ),
        JSON.stringify(
          refresh.body.results.map((r: { title: string; section: string }) => [r.title, r.section]),
        ),
      );
      // The project's own guides are the book source.
      const approve = await ask({ q: 'agent-commons device approve code member', sources: ['book'], k: 5 });
      assert.equal(approve.status, 200, approve.text);
      assert.ok(
        approve.body.results.some((r: { authors: string }) => r.authors === 'The agent-commons project'),
        'the project’s guides answer',
      );
      const answered = await ask({ q: 'What is an authorization grant?', synthesize: true, k: 3 });
      assert.equal(answered.status, 200, answered.text);
      assert.equal(answered.body.answered_by, 'extractive');
      assert.ok(answered.body.citations.length > 0, 'the offline synthesizer cites what it found');
      const stored = await t.deps.db.selectFrom('corpus_documents').select(['title', 'source']).execute();
      assert.ok(stored.some((d) => d.title === 'RFC 6749: The OAuth 2.0 Authorization Framework'));
      assert.ok(stored.filter((d) => d.source === 'book').length >= 5, 'the guides are stored');
    });

    test('the shipped RFC is the published text, unedited (its licence covers it only so)', () => {
      const bytes = readFileSync(new URL('../corpus/rfc6749.txt', import.meta.url));
      assert.equal(bytes.length, 163_498);
      assert.equal(
        createHash('sha256').update(bytes).digest('hex'),
        'f204fc8661d6c92d2ec6e0b54808f961a9ad26e792f57f312d9528335519bd71',
      );
    });

    test('token mint --json names the member, the tier and the sandbox flag', async () => {
      const cory = await demoMember('cory@demo.example.org');
      for (const sandbox of [false, true]) {
        const minted = await runCli(t.database.url, [
          'token',
          'mint',
          '--member',
          cory.id,
          '--scopes',
          'read:public,resources:book',
          ...(sandbox ? ['--sandbox'] : []),
          '--json',
        ]);
        assert.equal(minted.code, 0, minted.stderr);
        const printed = JSON.parse(minted.stdout);
        const stored = await t.deps.db
          .selectFrom('tokens')
          .selectAll()
          .where('hash', '=', sha256(printed.token))
          .executeTakeFirstOrThrow();
        assert.deepEqual(printed, {
          token: printed.token,
          id: stored.id,
          prefix: stored.prefix,
          scopes: ['read:public', 'resources:book'],
          member_id: cory.id,
          member_name: cory.name,
          tier: 'core',
          sandbox,
        });
        assert.equal(stored.member_id, cory.id);
        assert.equal(stored.sandbox, sandbox ? 1 : 0);
      }
    });
  });
}
