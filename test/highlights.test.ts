import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parseList } from 'structured-headers';
import { MS, utcDayStart } from '../src/clock.ts';
import { decideHighlight } from '../src/domain/highlights/highlights.ts';
import { type Member, setMemberTier } from '../src/domain/members/members.ts';
import { sha256 } from '../src/secrets.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';
import { story } from './support/highlight-story.ts';

const PENDING = '/api/ingest/highlights/pending';
const SEVEN_DAYS = 7 * MS.day;

let sequence = 0;
/** A story id no other test uses, in the reference slug shape. */
function storyId(tag: string): string {
  sequence += 1;
  return `2026-07-16-${tag}-${sequence}-${Math.random().toString(36).slice(2, 8)}`;
}

for (const engine of engines) {
  describe(`highlight submission (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine: engine.name });
    });
    after(() => t?.close());

    async function submitter(): Promise<{ member: Member; token: string }> {
      const member = await t.member('core');
      return { member, token: await t.token(member, ['events:submit_recap']) };
    }
    const submit = (token: string | undefined, body: unknown) => t.call('POST', PENDING, { token, body });
    const poll = (token: string, id?: string) =>
      t.call('GET', id === undefined ? PENDING : `${PENDING}?id=${encodeURIComponent(id)}`, { token });
    const stored = (id: string) =>
      t.deps.db.selectFrom('highlights').selectAll().where('id', '=', id).executeTakeFirst();

    /** The daily-quota counter rows of one token (the per-minute default policy is not included). */
    async function quotaRows(token: string) {
      const row = await t.deps.db
        .selectFrom('tokens')
        .select('id')
        .where('hash', '=', sha256(token))
        .executeTakeFirstOrThrow();
      const rows = await t.deps.db
        .selectFrom('counters')
        .select(['key', 'count', 'expires_at'])
        .where('key', 'like', `highlights:${row.id}:%`)
        .orderBy('key')
        .execute();
      return rows.map((r) => ({ key: r.key, count: Number(r.count), expires_at: Number(r.expires_at) }));
    }
    const quotaSpent = async (token: string) =>
      (await quotaRows(token)).reduce((sum, row) => sum + row.count, 0);
    /** RateLimit (RFC 9651 list) as policy name → remaining. */
    function remainingByPolicy(headers: Headers): Record<string, unknown> {
      const value = headers.get('ratelimit');
      assert.ok(value, 'RateLimit header present');
      return Object.fromEntries(parseList(value).map(([name, params]) => [String(name), params.get('r')]));
    }
    const secondsToNextUtcDay = () => Math.ceil((utcDayStart(t.clock.now()) + MS.day - t.clock.now()) / 1000);

    test('a new story is queued: 202, Location equals poll_url, stored as pending', async () => {
      const { member, token } = await submitter();
      const id = storyId('top');
      const sent = story(id);
      const response = await submit(token, sent);
      assert.equal(response.status, 202, response.text);
      const pollUrl = `${t.baseUrl}/api/ingest/highlights/pending?id=${id}`;
      assert.equal(response.headers.get('location'), pollUrl);
      assert.equal(response.body.poll_url, pollUrl);
      assert.equal(response.body.ok, true);
      assert.equal(response.body.id, id);
      assert.equal(response.body.job_id, id);
      assert.equal(response.body.status, 'pending');
      assert.equal(response.body.expires_at, new Date(t.clock.now() + SEVEN_DAYS).toISOString());
      assert.deepEqual(response.body.rate, { current: 1, remaining: 2, limit: 3 });
      const policies = parseList(response.headers.get('ratelimit-policy') ?? '').map(([name]) =>
        String(name),
      );
      assert.deepEqual(
        policies.sort(),
        ['highlights', 'token'],
        'RateLimit-Policy names every policy applied',
      );
      assert.equal(remainingByPolicy(response.headers).highlights, 2);

      const row = await stored(id);
      assert.ok(row, 'the story is stored');
      assert.equal(row.status, 'pending');
      assert.equal(row.member_id, member.id);
      assert.deepEqual(JSON.parse(row.story), sent);
      assert.equal(Number(row.expires_at), t.clock.now() + SEVEN_DAYS);
      assert.equal(await quotaSpent(token), 1);
    });

    test('the story may be wrapped under `story`', async () => {
      const { member, token } = await submitter();
      const id = storyId('wrapped');
      const inner = story(id, { action: 'organized' });
      const response = await submit(token, { story: inner });
      assert.equal(response.status, 202, response.text);
      assert.equal(response.body.job_id, id);
      assert.equal(response.headers.get('location'), `${t.baseUrl}/api/ingest/highlights/pending?id=${id}`);
      assert.equal(response.body.poll_url, response.headers.get('location'));
      const row = await stored(id);
      assert.ok(row);
      assert.equal(row.member_id, member.id);
      assert.equal(row.status, 'pending');
      assert.deepEqual(JSON.parse(row.story), inner, 'the wrapped story is stored, not the wrapper');
    });

    test('resubmitting a pending id refreshes the story and spends no quota', async () => {
      const { token } = await submitter();
      const id = storyId('refresh');
      const first = await submit(token, story(id));
      assert.equal(first.status, 202, first.text);
      const submittedAt = Number((await stored(id))!.submitted_at);
      const countersBefore = await quotaRows(token);
      assert.equal(countersBefore.length, 1);
      assert.equal(countersBefore[0].count, 1);

      t.clock.advance(MS.minute);
      const refreshed = story(id, { dek: 'Updated: the talk ran long.' });
      const again = await submit(token, { story: refreshed });
      assert.equal(again.status, 202, again.text);
      assert.equal(again.body.job_id, id);
      assert.deepEqual(again.body.rate, { current: 1, remaining: 2, limit: 3 }, 'rate.current unchanged');
      assert.deepEqual(await quotaRows(token), countersBefore, 'the counter row is untouched');
      const row = await stored(id);
      assert.ok(row);
      assert.deepEqual(JSON.parse(row.story), refreshed);
      assert.equal(row.status, 'pending');
      assert.equal(Number(row.submitted_at), submittedAt);
      assert.equal(Number(row.updated_at), t.clock.now());
      const rows = await t.deps.db.selectFrom('highlights').select('id').where('id', '=', id).execute();
      assert.equal(rows.length, 1, 'still one record');
    });

    test('three new stories per token per UTC day, then 429 until the next UTC day', async () => {
      const { member, token } = await submitter();
      const ids = [storyId('q'), storyId('q'), storyId('q')];
      for (const [index, id] of ids.entries()) {
        const response = await submit(token, story(id));
        assert.equal(response.status, 202, response.text);
        assert.deepEqual(response.body.rate, { current: index + 1, remaining: 2 - index, limit: 3 });
      }
      const refused = storyId('q-refused');
      const over = await submit(token, story(refused));
      assert.equal(over.status, 429, over.text);
      assert.equal(over.body.error_kind, 'rate_limit');
      assert.equal(typeof over.body.error, 'string');
      const wait = secondsToNextUtcDay();
      assert.equal(over.headers.get('retry-after'), String(wait));
      assert.equal(over.body.retry_after_seconds, wait);
      assert.deepEqual(over.body.rate, { current: 3, remaining: 0, limit: 3 });
      assert.equal(remainingByPolicy(over.headers).highlights, 0, 'the 429 names the exhausted policy');
      assert.equal(await stored(refused), undefined, 'the refused story is not stored');
      assert.equal(await quotaSpent(token), 3);

      const refresh = await submit(token, story(ids[0], { dek: 'a free refresh' }));
      assert.equal(refresh.status, 202, 'resubmitting a pending id is free even at the limit');
      assert.deepEqual(refresh.body.rate, { current: 3, remaining: 0, limit: 3 });

      const otherToken = await t.token(member, ['events:submit_recap']);
      const other = await submit(otherToken, story(storyId('q-other')));
      assert.equal(other.status, 202, 'the quota is per token');

      t.clock.set(utcDayStart(t.clock.now()) + MS.day);
      const nextDay = await submit(token, story(refused));
      assert.equal(nextDay.status, 202, nextDay.text);
      assert.deepEqual(nextDay.body.rate, { current: 1, remaining: 2, limit: 3 });
      assert.equal((await stored(refused))?.status, 'pending');
    });

    test('the daily quota survives a restart', async () => {
      const { token } = await submitter();
      for (let i = 0; i < 2; i++) assert.equal((await submit(token, story(storyId('r')))).status, 202);
      await t.restart();
      const third = await submit(token, story(storyId('r')));
      assert.equal(third.status, 202, third.text);
      assert.deepEqual(third.body.rate, { current: 3, remaining: 0, limit: 3 });
      const fourthId = storyId('r');
      const fourth = await submit(token, story(fourthId));
      assert.equal(fourth.status, 429, fourth.text);
      assert.equal(fourth.body.error_kind, 'rate_limit');
      assert.equal(await stored(fourthId), undefined);
      assert.equal(await quotaSpent(token), 3);
    });

    test('413 for a body over 256 KB; a body just under it is accepted', async () => {
      const { token } = await submitter();
      const bigId = storyId('big');
      const big = await submit(token, story(bigId, { notes: 'x'.repeat(256 * 1024) }));
      assert.equal(big.status, 413, big.text);
      assert.equal(big.body.error, 'payload_too_large');
      assert.equal(big.body.error_kind, 'payload_too_large');
      assert.equal(await stored(bigId), undefined);

      const nearId = storyId('near');
      const near = await submit(token, story(nearId, { notes: 'x'.repeat(250 * 1024) }));
      assert.equal(near.status, 202, 'the highlight cap is 256 KB, above the default body cap');
      assert.equal((await stored(nearId))?.status, 'pending');
      assert.equal(await quotaSpent(token), 1, 'the 413 spent no quota');
    });

    test('400 invalid_json for a malformed body', async () => {
      const { token } = await submitter();
      const response = await t.call('POST', PENDING, {
        token,
        rawBody: '{"id": "2026-07-16-broken", "dek": ',
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(response.status, 400, response.text);
      assert.equal(response.body.error, 'invalid_json');
      assert.equal(response.body.error_kind, 'invalid_json');
      assert.equal(await stored('2026-07-16-broken'), undefined);
      assert.equal(await quotaSpent(token), 0);
    });

    test('the display forms agents written for the reference send are accepted and kept as sent', async () => {
      const forms: Record<string, unknown>[] = [
        { date: 'MAY 08' },
        { date: 'May 8, 2026' },
        { member_id: 4217 },
        {
          stats: [
            { label: 'sold out', value: true },
            { label: 'waitlist', value: null },
          ],
        },
        { venue: { room: 'Hall B', floor: 2 }, tags: ['talk'] },
      ];
      for (const extra of forms) {
        // A token of its own each: three new stories a day per token.
        const { token } = await submitter();
        const id = storyId('display');
        const sent = story(id, extra);
        const response = await submit(token, sent);
        assert.equal(response.status, 202, `${JSON.stringify(extra)}: ${response.text}`);
        assert.equal(response.body.id, id);
        const row = await stored(id);
        assert.ok(row, 'stored');
        assert.equal(row.status, 'pending');
        assert.deepEqual(JSON.parse(row.story), sent, 'stored exactly as sent');
      }
      const { token } = await submitter();
      const tooLong = await submit(token, story(storyId('date'), { date: 'd'.repeat(65) }));
      assert.equal(tooLong.status, 400, 'sizes are still checked');
      assert.equal(tooLong.body.field, 'date');
    });

    test('400 invalid_story for a story that breaks the rules', async () => {
      const { token } = await submitter();
      const { id: _omitted, ...withoutId } = story('unused');
      const cases: { name: string; body: Record<string, unknown>; field: string; id?: string }[] = [
        { name: 'missing id', body: withoutId, field: 'id' },
        { name: 'missing id (wrapped)', body: { story: withoutId }, field: 'id' },
        { name: 'bad id pattern', body: story('-not a slug'), field: 'id', id: '-not a slug' },
        {
          name: 'inline image data',
          body: story(storyId('data'), { images: ['data:image/png;base64,iVBORw0KGgo='] }),
          field: 'images.0',
        },
        { name: 'dek over 800', body: story(storyId('dek'), { dek: 'd'.repeat(801) }), field: 'dek' },
        {
          name: 'dek over 800 (wrapped)',
          body: { story: story(storyId('dek'), { dek: 'd'.repeat(801) }) },
          field: 'dek',
        },
      ];
      for (const c of cases) {
        const response = await submit(token, c.body);
        assert.equal(response.status, 400, `${c.name}: ${response.text}`);
        assert.equal(response.body.error, 'invalid_story', c.name);
        assert.equal(response.body.error_kind, 'validation', c.name);
        assert.equal(response.body.field, c.field, c.name);
        const id = c.id ?? ((c.body.story as { id?: string } | undefined)?.id || (c.body.id as string));
        if (id) assert.equal(await stored(id), undefined, `${c.name}: nothing stored`);
      }
      const dek800 = storyId('dek-ok');
      assert.equal((await submit(token, story(dek800, { dek: 'd'.repeat(800) }))).status, 202);
      assert.equal(await quotaSpent(token), 1, 'only the valid story spent quota');
    });

    test('401 with ok:false without a token or with an unknown one', async () => {
      for (const token of [undefined, `agt_${'A'.repeat(43)}`]) {
        const id = storyId('anon');
        const response = await submit(token, story(id));
        assert.equal(response.status, 401, response.text);
        assert.equal(response.body.ok, false);
        assert.equal(response.body.error_kind, 'unauthorized');
        assert.equal(typeof response.body.error, 'string');
        assert.equal(response.headers.get('www-authenticate'), null, 'operation 401s carry no challenge');
        assert.ok(response.headers.get('ratelimit-policy'), 'the rejection carries rate headers');
        assert.equal(await stored(id), undefined);
      }
    });

    test('403 insufficient_scope names the tier when the token lacks events:submit_recap', async () => {
      const member = await t.member('core');
      const token = await t.token(member, ['read:public', 'events:rsvp']);
      const id = storyId('scope');
      const response = await submit(token, story(id));
      assert.equal(response.status, 403, response.text);
      assert.equal(response.body.ok, false);
      assert.equal(response.body.error, 'insufficient_scope');
      assert.equal(response.body.error_kind, 'insufficient_scope');
      assert.equal(response.body.tier, 'core');
      assert.equal(await stored(id), undefined);
    });

    test('403 tier when the member is demoted after minting (the tier is checked live)', async () => {
      const { member, token } = await submitter();
      const before = await submit(token, story(storyId('demote')));
      assert.equal(before.status, 202, before.text);
      await setMemberTier(t.deps.db, t.clock, t.deps.tiers, member.id, 'member');
      const id = storyId('demote');
      const response = await submit(token, story(id));
      assert.equal(response.status, 403, response.text);
      assert.equal(response.body.ok, false);
      assert.equal(response.body.error_kind, 'tier');
      assert.equal(response.body.tier, 'member');
      assert.equal(await stored(id), undefined);
      assert.equal(await quotaSpent(token), 1);
    });

    test('409 when another member submits a story id that is already taken', async () => {
      const owner = await submitter();
      const intruder = await submitter();
      const id = storyId('taken');
      const original = story(id);
      assert.equal((await submit(owner.token, original)).status, 202);
      const response = await submit(intruder.token, story(id, { dek: 'not yours' }));
      assert.equal(response.status, 409, response.text);
      assert.equal(response.body.error_kind, 'conflict');
      assert.equal(typeof response.body.error, 'string');
      const row = await stored(id);
      assert.ok(row);
      assert.equal(row.member_id, owner.member.id);
      assert.deepEqual(JSON.parse(row.story), original, 'the owner’s story is untouched');
      assert.equal(await quotaSpent(intruder.token), 0);
      const intruderPoll = await poll(intruder.token, id);
      assert.equal(intruderPoll.status, 404, 'another member cannot poll the story either');
    });

    test('poll: pending while queued, gone after approval or rejection; count without id', async () => {
      const { token } = await submitter();
      const none = await poll(token);
      assert.equal(none.status, 200, none.text);
      assert.deepEqual(none.body, { ok: true, count: 0 });

      const approved = storyId('approve');
      const rejected = storyId('reject');
      for (const id of [approved, rejected]) assert.equal((await submit(token, story(id))).status, 202);
      const pending = await poll(token, approved);
      assert.equal(pending.status, 200, pending.text);
      assert.equal(pending.body.status, 'pending');
      assert.deepEqual(await poll(token).then((r) => r.body), { ok: true, count: 2 });

      assert.equal(await decideHighlight(t.deps, approved, 'approve', 'op'), 'done');
      const gone = await poll(token, approved);
      assert.equal(gone.status, 200);
      assert.equal(gone.body.status, 'gone');
      assert.equal((await stored(approved))?.status, 'active');
      assert.deepEqual(await poll(token).then((r) => r.body), { ok: true, count: 1 });

      assert.equal(await decideHighlight(t.deps, rejected, 'reject', 'op'), 'done');
      assert.equal((await poll(token, rejected)).body.status, 'gone');
      assert.equal((await stored(rejected))?.status, 'rejected');
      assert.deepEqual(await poll(token).then((r) => r.body), { ok: true, count: 0 });

      const unknown = await poll(token, storyId('never-sent'));
      assert.equal(unknown.status, 404, unknown.text);
      assert.equal(unknown.body.error_kind, 'not_found');
    });

    test('poll: gone once the 7-day moderation window passes', async () => {
      const { token } = await submitter();
      const id = storyId('expire');
      const response = await submit(token, story(id));
      assert.equal(response.status, 202);
      const expiresAt = Date.parse(response.body.expires_at);
      t.clock.set(expiresAt - MS.second);
      assert.equal((await poll(token, id)).body.status, 'pending');
      assert.deepEqual((await poll(token)).body, { ok: true, count: 1 });
      t.clock.set(expiresAt);
      const gone = await poll(token, id);
      assert.equal(gone.status, 200);
      assert.equal(gone.body.status, 'gone');
      assert.deepEqual((await poll(token)).body, { ok: true, count: 0 });
      assert.equal(await decideHighlight(t.deps, id, 'approve', 'op'), 'not_pending');
    });

    test('an id whose pending story expired is queued again as a new submission, spending quota', async () => {
      const { token } = await submitter();
      const id = storyId('again');
      const first = await submit(token, story(id));
      assert.equal(first.status, 202, first.text);
      t.clock.set(Date.parse(first.body.expires_at) + MS.minute);
      const spentBefore = await quotaSpent(token);
      const retold = story(id, { dek: 'Told again a week later.' });
      const again = await submit(token, retold);
      assert.equal(again.status, 202, again.text);
      assert.equal(again.body.id, id);
      assert.equal(Date.parse(again.body.expires_at), t.clock.now() + SEVEN_DAYS);
      const row = await stored(id);
      assert.ok(row);
      assert.equal(row.status, 'pending');
      assert.equal(Number(row.submitted_at), t.clock.now());
      assert.equal(Number(row.expires_at), t.clock.now() + SEVEN_DAYS);
      assert.deepEqual(JSON.parse(row.story), retold);
      assert.equal(await quotaSpent(token), spentBefore + 1, 'a new submission spends the quota');
      assert.equal((await poll(token, id)).body.status, 'pending');
    });

    test('409 already_moderated for an id a moderator decided; the stored story is untouched', async () => {
      const { token } = await submitter();
      const id = storyId('decided');
      const original = story(id);
      assert.equal((await submit(token, original)).status, 202);
      assert.equal(await decideHighlight(t.deps, id, 'approve', 'op'), 'done');
      const spentBefore = await quotaSpent(token);
      const response = await submit(token, story(id, { dek: 'A second try.' }));
      assert.equal(response.status, 409, response.text);
      assert.equal(response.body.error, 'already_moderated');
      assert.equal(response.body.error_kind, 'conflict');
      const row = await stored(id);
      assert.equal(row?.status, 'active');
      assert.deepEqual(JSON.parse(row?.story ?? 'null'), original);
      assert.equal(await quotaSpent(token), spentBefore);
    });

    test('a sandbox token gets a receipt; nothing is stored and no quota is spent', async () => {
      const member = await t.member('core');
      const token = await t.token(member, ['events:submit_recap'], { sandbox: true });
      for (const body of [story(storyId('sandbox')), { story: story(storyId('sandbox')) }]) {
        const response = await submit(token, body);
        assert.equal(response.status, 200, response.text);
        assert.equal(response.body.ok, true);
        assert.equal(response.body.sandbox, true);
        assert.equal(response.body.simulated, true);
        // The receipt shows the story as it would have been filed, whichever shape was sent.
        assert.deepEqual(response.body.would_have, {
          action: 'submitHighlight',
          scope: 'events:submit_recap',
          args: (body as { story?: unknown }).story ?? body,
        });
        assert.equal(response.headers.get('location'), null);
        const id = ((body as { story?: { id: string } }).story ?? (body as { id: string })).id;
        assert.equal(await stored(id), undefined);
      }
      const rows = await t.deps.db
        .selectFrom('highlights')
        .select('id')
        .where('member_id', '=', member.id)
        .execute();
      assert.equal(rows.length, 0);
      assert.equal(await quotaSpent(token), 0);
    });

    test('a sandbox token gets the same story validation as a real one', async () => {
      const member = await t.member('core');
      const token = await t.token(member, ['events:submit_recap'], { sandbox: true });
      const id = storyId('sandbox-bad');
      const response = await submit(token, { id, images: ['data:image/png;base64,AAAA'] });
      assert.equal(response.status, 400, response.text);
      assert.equal(response.body.error, 'invalid_story');
      assert.equal(response.body.field, 'images.0');
      assert.equal(await stored(id), undefined);
    });
  });
}
