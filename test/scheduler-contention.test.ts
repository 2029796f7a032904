// A background job whose transaction loses to concurrent writes is not an outage: the scheduler
// logs that it lost and leaves the job to its next pass, and never says it waits for the database.
// PostgreSQL raises the failure itself: a statement trigger on the counters the sweep job deletes.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { startScheduler } from '../src/workers/scheduler.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';
import { waitUntil } from './support/wait.ts';

const postgres = engines.find((engine) => engine.name === 'postgres')!;

describe('a background job that loses to concurrent writes (postgres)', { skip: postgres.skip }, () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ engine: 'postgres' });
    await sql`create function lose_sweep() returns trigger language plpgsql as $$
      begin
        raise exception 'could not serialize access due to concurrent update' using errcode = '40001';
      end $$`.execute(t.deps.db);
    await sql`create trigger lose_sweep before delete on counters
      for each statement execute function lose_sweep()`.execute(t.deps.db);
  });
  after(() => t?.close());

  test('is logged as lost, once per failure, and not as waiting for the database', async () => {
    const lines: { level: string; details: Record<string, unknown>; message: string }[] = [];
    const log = {
      info: (details: Record<string, unknown>, message: string) =>
        lines.push({ level: 'info', details, message }),
      warn: (details: Record<string, unknown>, message: string) =>
        lines.push({ level: 'warn', details, message }),
    };
    // Every job runs its first pass at once; the sweep's next pass is a minute away.
    const stop = startScheduler(t.deps, log, { workers: false });
    try {
      await waitUntil(
        () => lines.some((line) => line.details.job === 'counter sweep'),
        'the sweep job’s first pass',
      );
    } finally {
      await stop();
    }
    assert.deepEqual(
      lines.filter((line) => line.details.job === 'counter sweep'),
      [
        {
          level: 'warn',
          details: { job: 'counter sweep', cause: 'could not serialize access due to concurrent update' },
          message: 'background job lost to concurrent writes; its next pass repeats it',
        },
      ],
    );
    assert.deepEqual(
      lines.filter((line) => /waits for the database|resumed/.test(line.message)),
      [],
    );
    // The trigger did its part: the counters table refuses the sweep's DELETE.
    await assert.rejects(
      t.deps.db.deleteFrom('counters').where('expires_at', '<', 0).execute(),
      (error: { code?: string }) => error.code === '40001',
    );
  });
});
