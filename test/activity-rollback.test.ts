// The activity row travels with the operation's transaction (on PostgreSQL with its COMMIT). When
// that transaction does not commit, the call is still recorded, once, with the answer it got: the
// row the transaction carried is rolled back with it, and the pipeline writes one on its own.
// The COMMIT is made to fail with a deferred constraint trigger, checked only at commit.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { MS } from '../src/clock.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';
import { story } from './support/highlight-story.ts';

const postgres = engines.find((engine) => engine.name === 'postgres')!;

describe('activity of a call whose transaction fails at its COMMIT (postgres)', {
  skip: postgres.skip,
}, () => {
  let t: TestApp;
  const logLines: Record<string, unknown>[] = [];
  before(async () => {
    const logStream = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) logLines.push(JSON.parse(line));
        done();
      },
    });
    t = await startTestApp({ engine: 'postgres', logStream });
    await sql`create function refuse_marked_story() returns trigger language plpgsql as $$
      begin
        if new.id = 'refused-at-commit' then raise exception 'refused at commit'; end if;
        if new.id = 'lost-race' then
          raise exception 'could not serialize access due to concurrent update' using errcode = '40001';
        end if;
        return null;
      end $$`.execute(t.deps.db);
    await sql`create constraint trigger refuse_marked_story after insert on highlights
      deferrable initially deferred for each row execute function refuse_marked_story()`.execute(t.deps.db);
  });
  after(() => t?.close());

  test('the refused write is answered as failed, stores no story, and its call is recorded once', async () => {
    const member = await t.member('core');
    const token = await t.token(member, ['events:submit_recap']);
    const refused = await t.call('POST', '/api/ingest/highlights/pending', {
      token,
      body: story('refused-at-commit'),
    });
    assert.equal(refused.status, 500, JSON.stringify(refused.body));
    t.clock.advance(MS.second);
    const accepted = await t.call('POST', '/api/ingest/highlights/pending', { token, body: story('kept') });
    assert.equal(accepted.status, 202, JSON.stringify(accepted.body));

    const stories = await t.deps.db
      .selectFrom('highlights')
      .select('id')
      .where('member_id', '=', member.id)
      .execute();
    assert.deepEqual(
      stories.map((row) => row.id),
      ['kept'],
    );
    const rows = await t.deps.db
      .selectFrom('activity')
      .select(['operation', 'status', 'outcome'])
      .where('member_id', '=', member.id)
      .orderBy('id')
      .execute();
    assert.deepEqual(rows, [
      { operation: 'submitHighlight', status: 500, outcome: refused.body.error },
      { operation: 'submitHighlight', status: 202, outcome: 'ok' },
    ]);
    const wire = await t.call('GET', '/api/activity/me', {
      token: await t.token(member, ['membership:read']),
    });
    assert.deepEqual(
      wire.body.events.map((event: { status: number }) => event.status),
      [202, 500],
    );
  });

  test('a write that loses a serialization race at its COMMIT: 503 saying so, nothing stored, the call recorded once', async () => {
    const member = await t.member('core');
    const token = await t.token(member, ['events:submit_recap']);
    const lost = await t.call('POST', '/api/ingest/highlights/pending', { token, body: story('lost-race') });
    assert.equal(lost.status, 503, JSON.stringify(lost.body));
    assert.equal(lost.headers.get('retry-after'), '2');
    assert.deepEqual(lost.body, {
      error: 'service_unavailable',
      error_kind: 'unavailable',
      message: 'The request lost a race with concurrent writes and was rolled back; retry shortly.',
      retry_after_seconds: 2,
      request_id: lost.headers.get('x-request-id'),
    });
    const stories = await t.deps.db
      .selectFrom('highlights')
      .select('id')
      .where('member_id', '=', member.id)
      .execute();
    assert.deepEqual(stories, []);
    const rows = await t.deps.db
      .selectFrom('activity')
      .select(['operation', 'status', 'outcome'])
      .where('member_id', '=', member.id)
      .execute();
    assert.deepEqual(rows, [{ operation: 'submitHighlight', status: 503, outcome: 'service_unavailable' }]);
    // The log says what happened, not that the database is away.
    const said = logLines.filter((line) => line.level === 40 && String(line.msg).includes('503'));
    assert.deepEqual(
      said.map((line) => [line.msg, line.code]),
      [['lost to concurrent writes and rolled back: answering 503', '40001']],
    );
  });
});
