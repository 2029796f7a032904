// Worker leases in the metrics and the drain's hand-back, on both engines:
// a booking queued on the wire is claimed by one worker that then stalls past its lease; a second
// worker claims it again (a lease expiry), the first finds its lease gone when it settles (a lost
// lease); a lease still held is given back by releaseHeldLeases. The counters and the queue gauges
// are read where Prometheus reads them: the app's metrics path, behind its bearer.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MS } from '../src/clock.ts';
import { claimDueJobs, releaseHeldLeases, settleJob } from '../src/domain/queue/claim.ts';
import { saveResource } from '../src/domain/resources/resources.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';

const BEARER = 'lease-metrics-bearer-0123456789';
const LEASE_MS = 30_000;
const ALWAYS = { weekdays: '00:00-24:00', weekends: '00:00-24:00' };

async function scrape(t: TestApp): Promise<Map<string, number>> {
  const response = await t.call('GET', '/metrics', { headers: { authorization: `Bearer ${BEARER}` } });
  assert.equal(response.status, 200);
  const values = new Map<string, number>();
  for (const line of response.text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const cut = line.lastIndexOf(' ');
    values.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return values;
}

describe('worker leases in the metrics', () => {
  for (const engine of engines) {
    test(`an expired lease, a lost one and one given back are counted (${engine.name})`, {
      skip: engine.skip,
    }, async () => {
      const t = await startTestApp({
        engine: engine.name,
        config: { metrics: { path: '/metrics', bearer: BEARER, host: '127.0.0.1' } },
      });
      try {
        await saveResource(t.deps.db, {
          id: 'room-l',
          kind: 'room',
          name: 'Lease room',
          capacity: 4,
          openHours: ALWAYS,
          bookable: true,
        });
        const member = await t.member('core');
        const token = await t.token(member, ['resources:book']);
        const day = t.clock.now() + 8 * MS.day;
        for (const hour of [9, 12]) {
          const booked = await t.call('POST', '/api/resources/book', {
            token,
            body: {
              resource_id: 'room-l',
              start_iso: new Date(day + hour * MS.hour).toISOString(),
              end_iso: new Date(day + (hour + 1) * MS.hour).toISOString(),
              email: 'lease@test.example',
            },
          });
          assert.equal(booked.status, 202, booked.text);
        }
        const before = await scrape(t);
        const counted = (name: string) => before.get(name) ?? 0;
        assert.equal(before.get('agent_commons_queue_depth{queue="bookings"}'), 2);
        t.clock.advance(MS.second);
        assert.ok(before.get('agent_commons_queue_oldest_due_age_seconds{queue="bookings"}')! >= 0);

        // Worker one claims both and stalls; its leases run out; worker two claims them again.
        const first = await claimDueJobs(t.deps.db, 'bookings', t.clock.now(), 10, LEASE_MS);
        assert.equal(first.length, 2);
        assert.equal((await scrape(t)).get('agent_commons_queue_leased{queue="bookings"}'), 2);
        t.clock.advance(LEASE_MS + 1);
        const second = await claimDueJobs(t.deps.db, 'bookings', t.clock.now(), 1, LEASE_MS);
        assert.equal(second.length, 1);
        // Worker one wakes up: its lease on that job is gone.
        const taken = first.find(({ id }) => id === second[0].id)!;
        assert.equal(await settleJob(t.deps.db, 'bookings', taken, { status: 'confirmed' }), false);
        // Draining: the lease worker two still holds is given back, the job is claimable at once.
        assert.equal(await releaseHeldLeases(t.deps.db, t.clock.now()), 1);
        const row = await t.deps.db
          .selectFrom('bookings')
          .select(['status', 'locked_until'])
          .where('id', '=', second[0].id)
          .executeTakeFirstOrThrow();
        assert.deepEqual(
          { ...row, locked_until: row.locked_until === null ? null : 'set' },
          {
            status: 'queued',
            locked_until: null,
          },
        );

        const afterwards = await scrape(t);
        const delta = (name: string) => (afterwards.get(name) ?? 0) - counted(name);
        assert.equal(delta('agent_commons_worker_lease_expiries_total{queue="bookings"}'), 1);
        assert.equal(delta('agent_commons_worker_leases_lost_total{queue="bookings"}'), 1);
        assert.equal(delta('agent_commons_worker_leases_released_total{queue="bookings"}'), 1);
        assert.equal(afterwards.get('agent_commons_queue_leased{queue="bookings"}'), 0);
        assert.equal(afterwards.get('agent_commons_queue_depth{queue="bookings"}'), 2);
        // Both have been due since they were queued, LEASE_MS and more ago by the service's clock.
        assert.ok(
          afterwards.get('agent_commons_queue_oldest_due_age_seconds{queue="bookings"}')! >= LEASE_MS / 1000,
        );
      } finally {
        await t.close();
      }
    });
  }
});
