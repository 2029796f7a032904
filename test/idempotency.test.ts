import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Type } from '@sinclair/typebox';
import { MS, utcDayStart } from '../src/clock.ts';
import type { Member } from '../src/domain/members/members.ts';
import { defineOperation } from '../src/operations/types.ts';
import { sha256 } from '../src/secrets.ts';
import { counters } from '../src/storage/counters.ts';
import { transact } from '../src/storage/transactions.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';

const PENDING = '/api/ingest/highlights/pending';
const SLOW = '/api/test/slow-write';

let sequence = 0;
function unique(tag: string): string {
  sequence += 1;
  return `${tag}-${sequence}-${Math.random().toString(36).slice(2, 8)}`;
}
const storyId = (tag: string) => `2026-07-16-${unique(tag)}`;
const story = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  member_name: 'Grace Example',
  event_title: 'Hack night',
  event_url: 'https://events.example.org/hack-night',
  dek: 'Grace shipped the scheduler.',
  images: ['https://images.example.org/grace.jpg'],
  ...extra,
});

interface Deferred {
  promise: Promise<void>;
  resolve(): void;
}
function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/**
 * A write that stays inside its handler until the test releases it, so a second request can arrive
 * while the first still holds its Idempotency-Key. It records every run in memory.
 */
function slowWrite() {
  const state = { runs: [] as string[], entered: deferred(), gate: deferred() };
  const operation = defineOperation<{ note: string }, { ok: boolean; note: string; run: number }>({
    id: 'testSlowWrite',
    method: 'POST',
    path: SLOW,
    tag: 'test',
    summary: 'Test-only slow write',
    credential: 'bearer',
    sandbox: 'simulated',
    idempotent: true,
    inputFrom: 'body',
    input: Type.Object({ note: Type.String({ maxLength: 100 }) }, { additionalProperties: false }),
    output: Type.Object({ ok: Type.Boolean(), note: Type.String(), run: Type.Integer() }),
    successStatus: 201,
    errors: [],
    async handler({ input }) {
      state.runs.push(input.note);
      const run = state.runs.length;
      state.entered.resolve();
      await state.gate.promise;
      return {
        body: { ok: true, note: input.note, run },
        headers: { location: `/api/test/slow-write/${run}` },
      };
    },
  });
  return { state, operation };
}

const COMMITTED = '/api/test/committed-write';

/**
 * A real write (a counter row, in a transaction through the pipeline's commit hook) that then reads
 * its own Idempotency-Key's state, or fails after its commit when asked to: what a crash between
 * the commit and the recorded answer leaves behind.
 */
const committedWrite = defineOperation<{ note: string; fail?: boolean }, { ok: boolean; state: string }>({
  id: 'testCommittedWrite',
  method: 'POST',
  path: COMMITTED,
  tag: 'test',
  summary: 'Test-only write that reports its key state after its commit',
  credential: 'bearer',
  sandbox: 'simulated',
  idempotent: true,
  inputFrom: 'body',
  input: Type.Object(
    { note: Type.String({ maxLength: 100 }), fail: Type.Optional(Type.Boolean()) },
    { additionalProperties: false },
  ),
  output: Type.Object({ ok: Type.Boolean(), state: Type.String() }),
  successStatus: 201,
  errors: [],
  async handler({ input, deps, principal, request }) {
    await transact(deps, (trx) =>
      counters.hit(trx, `test-committed:${input.note}`, Date.now() + MS.hour).then(() => undefined),
    );
    if (input.fail) throw new Error('stopped after the commit');
    const keyHash = sha256(`member:${principal.member.id}\nPOST\n${COMMITTED}\n${request.idempotencyKey}`);
    const row = await deps.db
      .selectFrom('idempotency')
      .select('state')
      .where('key_hash', '=', keyHash)
      .executeTakeFirst();
    return { body: { ok: true, state: row?.state ?? 'none' } };
  },
});

for (const engine of engines) {
  describe(`Idempotency-Key (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    const slow = slowWrite();
    before(async () => {
      t = await startTestApp({ engine: engine.name, extraOperations: [slow.operation, committedWrite] });
    });
    after(() => t?.close());

    async function submitter(): Promise<{ member: Member; token: string }> {
      const member = await t.member('core');
      return { member, token: await t.token(member, ['events:submit_recap']) };
    }
    const submit = (token: string, body: unknown, key?: string) =>
      t.call('POST', PENDING, { token, body, headers: key === undefined ? {} : { 'idempotency-key': key } });
    const highlightRows = (memberId: string) =>
      t.deps.db.selectFrom('highlights').selectAll().where('member_id', '=', memberId).execute();
    const idempotencyRows = () =>
      t.deps.db.selectFrom('idempotency').select(['key_hash', 'state', 'status']).execute();

    async function quotaSpent(token: string): Promise<number> {
      const row = await t.deps.db
        .selectFrom('tokens')
        .select('id')
        .where('hash', '=', sha256(token))
        .executeTakeFirstOrThrow();
      const rows = await t.deps.db
        .selectFrom('counters')
        .select('count')
        .where('key', 'like', `highlights:${row.id}:%`)
        .execute();
      return rows.reduce((sum, r) => sum + Number(r.count), 0);
    }

    test('same key and body: the second response replays the first, one side effect', async () => {
      const { member, token } = await submitter();
      const key = unique('replay');
      const id = storyId('replay');
      const keysBefore = (await idempotencyRows()).length;
      const first = await submit(token, story(id), key);
      assert.equal(first.status, 202, first.text);
      assert.equal(first.headers.get('idempotent-replayed'), null, 'the first response is not a replay');

      t.clock.advance(MS.minute);
      const second = await submit(token, story(id), key);
      assert.equal(second.status, 202, second.text);
      assert.deepEqual(second.body, first.body);
      assert.equal(second.headers.get('location'), first.headers.get('location'));
      assert.equal(second.headers.get('location'), `${t.baseUrl}${PENDING}?id=${id}`);
      assert.equal(second.headers.get('idempotent-replayed'), 'true');

      const reordered = Object.fromEntries(Object.entries(story(id)).reverse());
      const third = await submit(token, reordered, key);
      assert.equal(third.status, 202, third.text);
      assert.equal(third.headers.get('idempotent-replayed'), 'true', 'key order does not change the body');
      assert.deepEqual(third.body, first.body);

      const rows = await highlightRows(member.id);
      assert.equal(rows.length, 1, 'one story');
      assert.equal(
        Number(rows[0].updated_at),
        Number(rows[0].submitted_at),
        'the replays did not refresh it',
      );
      assert.equal(await quotaSpent(token), 1, 'one quota unit');
      const keys = await idempotencyRows();
      assert.equal(keys.length, keysBefore + 1, 'one key record');
      assert.ok(keys.some((k) => k.state === 'done' && Number(k.status) === 202));
    });

    test('same key with a different body is 422 idempotency_conflict and changes nothing', async () => {
      const { member, token } = await submitter();
      const key = unique('conflict');
      const id = storyId('conflict');
      const original = story(id);
      assert.equal((await submit(token, original, key)).status, 202);
      for (const body of [story(id, { dek: 'A different dek.' }), story(storyId('conflict-other'))]) {
        const response = await submit(token, body, key);
        assert.equal(response.status, 422, response.text);
        assert.equal(response.body.error_kind, 'idempotency_conflict');
        assert.equal(typeof response.body.error, 'string');
        assert.equal(response.headers.get('idempotent-replayed'), null);
      }
      const rows = await highlightRows(member.id);
      assert.equal(rows.length, 1);
      assert.deepEqual(JSON.parse(rows[0].story), original, 'the story was not refreshed');
      assert.equal(await quotaSpent(token), 1);
    });

    test('a key longer than 255 characters is 400; 255 is accepted', async () => {
      const { member, token } = await submitter();
      const tooLongId = storyId('long-key');
      const tooLong = await submit(token, story(tooLongId), 'k'.repeat(256));
      assert.equal(tooLong.status, 400, tooLong.text);
      assert.equal(tooLong.body.error_kind, 'validation');
      assert.equal(typeof tooLong.body.error, 'string');
      assert.equal((await highlightRows(member.id)).length, 0, 'nothing stored');

      const longest = `${unique('k')}${'k'.repeat(255)}`.slice(0, 255);
      const accepted = await submit(token, story(storyId('key-255')), longest);
      assert.equal(accepted.status, 202, accepted.text);
      assert.equal(
        (await submit(token, story(storyId('key-255b')), longest)).status,
        422,
        'the key was kept',
      );
      assert.equal((await highlightRows(member.id)).length, 1);
    });

    test('a quoted sf-string key is the same key as the bare one', async () => {
      const { member, token } = await submitter();
      const key = unique('quoted');
      const id = storyId('quoted');
      const first = await submit(token, story(id), `"${key}"`);
      assert.equal(first.status, 202, first.text);
      const bare = await submit(token, story(id), key);
      assert.equal(bare.status, 202);
      assert.equal(bare.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(bare.body, first.body);
      const conflict = await submit(token, story(storyId('quoted-other')), `"${key}"`);
      assert.equal(conflict.status, 422, conflict.text);
      assert.equal((await highlightRows(member.id)).length, 1);
    });

    test('different members using the same key do not collide', async () => {
      const alice = await submitter();
      const bob = await submitter();
      const key = unique('shared');
      const aliceId = storyId('alice');
      const bobId = storyId('bob');
      const a = await submit(alice.token, story(aliceId), key);
      const b = await submit(bob.token, story(bobId), key);
      assert.equal(a.status, 202, a.text);
      assert.equal(b.status, 202, b.text);
      assert.equal(b.headers.get('idempotent-replayed'), null);
      assert.equal(b.body.job_id, bobId);
      assert.deepEqual(
        (await highlightRows(alice.member.id)).map((r) => r.id),
        [aliceId],
      );
      assert.deepEqual(
        (await highlightRows(bob.member.id)).map((r) => r.id),
        [bobId],
      );
      const bobAgain = await submit(bob.token, story(bobId), key);
      assert.equal(bobAgain.headers.get('idempotent-replayed'), 'true');
      assert.equal(bobAgain.body.job_id, bobId, 'each member replays their own result');
    });

    test('a failed attempt releases its key: a 400 and a 429 are not replayed', async () => {
      const { member, token } = await submitter();
      const badKey = unique('bad');
      const id = storyId('bad');
      const invalid = await submit(token, story(id, { images: ['data:image/png;base64,AAAA'] }), badKey);
      assert.equal(invalid.status, 400, invalid.text);
      assert.equal(invalid.body.error, 'invalid_story');
      const fixed = await submit(token, story(id), badKey);
      assert.equal(fixed.status, 202, `a corrected body under the same key runs: ${fixed.text}`);
      assert.equal(fixed.headers.get('idempotent-replayed'), null);

      for (let i = 0; i < 2; i++) assert.equal((await submit(token, story(storyId('fill')))).status, 202);
      const quotaKey = unique('quota');
      const refusedId = storyId('refused');
      const keysBefore = (await idempotencyRows()).length;
      const refused = await submit(token, story(refusedId), quotaKey);
      assert.equal(refused.status, 429, refused.text);
      assert.equal(refused.body.error_kind, 'rate_limit');
      assert.equal((await idempotencyRows()).length, keysBefore, 'the failed attempt left no key record');

      t.clock.set(utcDayStart(t.clock.now()) + MS.day);
      const retried = await submit(token, story(refusedId), quotaKey);
      assert.equal(retried.status, 202, retried.text);
      assert.equal(retried.headers.get('idempotent-replayed'), null, 'the 429 was not replayed');
      assert.deepEqual(retried.body.rate, { current: 1, remaining: 2, limit: 3 });
      const rows = await highlightRows(member.id);
      assert.ok(rows.some((r) => r.id === refusedId && r.status === 'pending'));
    });

    test('the key is marked applied in the transaction of the write; applied, it is never run again', async () => {
      const member = await t.member('core');
      const token = await t.token(member, []);
      const write = (body: unknown, key: string) =>
        t.call('POST', COMMITTED, { token, body, headers: { 'idempotency-key': key } });
      const countOf = async (note: string) =>
        Number(
          (
            await t.deps.db
              .selectFrom('counters')
              .select('count')
              .where('key', '=', `test-committed:${note}`)
              .executeTakeFirst()
          )?.count ?? 0,
        );

      // Read right after the commit, before the answer is recorded: already applied.
      const note = unique('applied');
      const first = await write({ note }, note);
      assert.equal(first.status, 201, first.text);
      assert.deepEqual(first.body, { ok: true, state: 'applied' });
      const keyHash = sha256(`member:${member.id}\nPOST\n${COMMITTED}\n${note}`);
      const stored = await t.deps.db
        .selectFrom('idempotency')
        .select('state')
        .where('key_hash', '=', keyHash)
        .executeTakeFirstOrThrow();
      assert.equal(stored.state, 'done', 'then the answer is recorded for replay');

      // The effect commits, then the call fails before its answer is recorded (as a crash would).
      const lost = unique('lost');
      const failed = await write({ note: lost, fail: true }, lost);
      assert.equal(failed.status, 500, failed.text);
      assert.equal(await countOf(lost), 1);
      const soon = await write({ note: lost, fail: true }, lost);
      assert.equal(soon.status, 409, soon.text);
      assert.equal(soon.body.error, 'idempotency_in_flight');
      t.clock.advance(61 * MS.second);
      const later = await write({ note: lost, fail: true }, lost);
      assert.equal(later.status, 409, later.text);
      assert.equal(later.body.error, 'idempotency_answer_lost');
      assert.equal(later.body.error_kind, 'idempotency_conflict');
      assert.equal(await countOf(lost), 1, 'the write was not applied a second time');
    });

    test('a key expires after 24 hours: the same key and body run again', async () => {
      const { member, token } = await submitter();
      const key = unique('expiry');
      const id = storyId('expiry');
      const first = await submit(token, story(id), key);
      assert.equal(first.status, 202, first.text);
      const submittedAt = t.clock.now();

      t.clock.advance(24 * MS.hour - MS.second);
      const late = await submit(token, story(id), key);
      assert.equal(late.headers.get('idempotent-replayed'), 'true', 'still inside the 24 h window');
      assert.deepEqual(late.body, first.body);

      t.clock.advance(2 * MS.second);
      const expired = await submit(token, story(id), key);
      assert.equal(expired.status, 202, expired.text);
      assert.equal(expired.headers.get('idempotent-replayed'), null, 'the key has expired');
      assert.notEqual(expired.body.expires_at, first.body.expires_at, 'a new result, not the stored one');
      assert.equal(expired.body.rate.current, 0, 'a refresh of the pending story spends no quota');
      const rows = await highlightRows(member.id);
      assert.equal(rows.length, 1);
      assert.equal(Number(rows[0].submitted_at), submittedAt);
      assert.equal(Number(rows[0].updated_at), t.clock.now(), 'the story was refreshed');
      assert.equal(await quotaSpent(token), 1);
    });

    test('a retry while the first request is in flight gets 409 with Retry-After', async () => {
      const member = await t.member('member');
      const token = await t.token(member, ['read:public']);
      const key = unique('flight');
      const headers = { 'idempotency-key': key };
      slow.state.runs.length = 0;
      slow.state.entered = deferred();
      slow.state.gate = deferred();

      const first = t.call('POST', SLOW, { token, body: { note: 'first' }, headers });
      let done: Awaited<typeof first>;
      try {
        await Promise.race([
          slow.state.entered.promise,
          first.then((r) =>
            assert.fail(`the first request never reached the handler: ${r.status} ${r.text}`),
          ),
        ]);
        const claimed = await idempotencyRows();
        assert.ok(
          claimed.some((k) => k.state === 'in_flight'),
          'the key is claimed before the side effect',
        );

        const second = await t.call('POST', SLOW, { token, body: { note: 'first' }, headers });
        assert.equal(second.status, 409, second.text);
        assert.equal(second.body.error_kind, 'idempotency_in_flight');
        assert.equal(typeof second.body.error, 'string');
        assert.ok(Number(second.headers.get('retry-after')) >= 1, 'Retry-After is set');
        assert.equal(second.body.retry_after_seconds, Number(second.headers.get('retry-after')));
        const conflicting = await t.call('POST', SLOW, { token, body: { note: 'other' }, headers });
        assert.equal(conflicting.status, 422, 'a different body is a conflict even while in flight');
        assert.deepEqual(slow.state.runs, ['first'], 'neither retry reached the handler');
      } finally {
        // Never leave the first request parked: the app could not close.
        slow.state.gate.resolve();
        done = await first;
      }
      assert.equal(done.status, 201, done.text);
      assert.deepEqual(done.body, { ok: true, note: 'first', run: 1 });
      assert.equal(done.headers.get('idempotent-replayed'), null);

      const third = await t.call('POST', SLOW, { token, body: { note: 'first' }, headers });
      assert.equal(third.status, 201, third.text);
      assert.deepEqual(third.body, done.body);
      assert.equal(third.headers.get('location'), done.headers.get('location'));
      assert.equal(third.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(slow.state.runs, ['first'], 'one execution in all');
    });

    test('sandbox receipts neither consume nor replay a real key', async () => {
      const member = await t.member('core');
      const sandbox = await t.token(member, ['events:submit_recap'], { sandbox: true });
      const real = await t.token(member, ['events:submit_recap']);
      const key = unique('sandbox');
      const id = storyId('sandbox');
      const keysBefore = (await idempotencyRows()).length;

      const receipt = await submit(sandbox, story(id), key);
      assert.equal(receipt.status, 200, receipt.text);
      assert.equal(receipt.body.sandbox, true);
      assert.equal(receipt.body.simulated, true);
      assert.equal(receipt.headers.get('idempotent-replayed'), null);
      assert.equal((await idempotencyRows()).length, keysBefore, 'the receipt stored no key record');
      assert.equal((await highlightRows(member.id)).length, 0);

      const executed = await submit(real, story(id), key);
      assert.equal(executed.status, 202, executed.text);
      assert.equal(executed.headers.get('idempotent-replayed'), null, 'the real write ran');
      assert.equal(executed.body.job_id, id);
      const rows = await highlightRows(member.id);
      assert.equal(rows.length, 1);
      assert.equal(rows[0].status, 'pending');
      assert.equal(await quotaSpent(real), 1);

      const receiptAgain = await submit(sandbox, story(id), key);
      assert.equal(receiptAgain.status, 200, 'a sandbox call is not handed the real 202');
      assert.equal(receiptAgain.body.simulated, true);
      assert.equal(receiptAgain.headers.get('idempotent-replayed'), null);
      assert.equal(await quotaSpent(sandbox), 0);
    });
  });
}
