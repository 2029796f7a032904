// Issue 4's scenarios: the anonymous upcoming-events read, and a 20-item batch against the same 20
// reads made one after another by one client.
import { MS, systemClock } from '../src/clock.ts';
import { markRefreshed } from '../src/domain/events/events.ts';
import { openDatabase } from '../src/storage/database.ts';
import { type Figures, load } from './support.ts';

/** Twenty upcoming events and a few donations, written before the server starts. */
export async function seedMemberReads(databaseUrl: string): Promise<void> {
  const database = openDatabase(databaseUrl);
  const now = systemClock.now();
  try {
    for (let i = 0; i < 20; i++) {
      const start = now + (i + 1) * MS.day;
      await database.db
        .insertInto('events')
        .values({
          id: `evt_bench_${i}`,
          platform_url: `https://lu.ma/bench-${i}`,
          title: `Bench event ${i}`,
          start_at: start,
          end_at: start + 2 * MS.hour,
          location: 'Main hall',
          cover_url: null,
          description: 'An event in the benchmark’s cache.',
          updated_at: now,
          source: 'feed',
        })
        .execute();
    }
    for (let i = 0; i < 5; i++) {
      await database.db
        .insertInto('donations')
        .values({
          id: `don_bench_${i}`,
          donor_name: `Donor ${i}`,
          amount_cents: 1000 * (i + 1),
          message: null,
          public: 1,
          source: 'bench',
          created_at: now - i * MS.hour,
        })
        .execute();
    }
    await markRefreshed(database.db, now);
  } finally {
    await database.close();
  }
}

/** The 20 reads of the batch scenario: the allow-listed public GETs an agent typically combines. */
const BATCH_PATHS = Array.from(
  { length: 20 },
  (_, i) =>
    [
      '/api/events/upcoming?limit=5',
      `/api/events/get?url=https://lu.ma/bench-${i}`,
      '/api/payments/donations?limit=3',
      `/api/events/get?luma=https://luma.com/bench-${(i + 7) % 20}`,
    ][i % 4],
);

async function expectOk(url: string, init?: RequestInit): Promise<void> {
  const response = await fetch(url, init);
  const text = await response.text();
  if (response.status !== 200 || text.includes('"ok":false') || text.includes('"status":4'))
    throw new Error(`${url}: ${response.status} ${text.slice(0, 300)}`);
}

/**
 * `calibrate` measures node:http again right before (f): the hello world (a2) and the same answer as
 * (f) with no work (f''). This machine's speed drifts over the minutes a run takes, so (f) is
 * compared with measurements taken side by side with it in time.
 */
export async function memberReadScenarios(
  serverUrl: string,
  pid: number | undefined,
  calibrate: () => Promise<{ hello: Figures; sameReply: Figures }>,
) {
  const batchBody = JSON.stringify({ requests: BATCH_PATHS.map((path) => ({ method: 'GET', path })) });
  await expectOk(`${serverUrl}/api/events/upcoming`);
  const gzipped = await fetch(`${serverUrl}/api/events/upcoming`, {
    headers: { 'accept-encoding': 'gzip, deflate' },
  });
  if (gzipped.headers.get('content-encoding') !== 'gzip' || (await gzipped.json()).count !== 20)
    throw new Error('the upcoming list did not come gzipped');
  for (const path of BATCH_PATHS) await expectOk(serverUrl + path);
  await expectOk(`${serverUrl}/api/batch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: batchBody,
  });
  const calibration = await calibrate();
  const upcoming = await load(
    '(f) GET /api/events/upcoming, anonymous',
    { url: `${serverUrl}/api/events/upcoming` },
    pid,
  );
  // The same read as most HTTP clients send it (fetch, Python requests, Go): the answer goes gzipped.
  const upcomingGzip = await load(
    '(f gz) the same, Accept-Encoding: gzip, deflate',
    { url: `${serverUrl}/api/events/upcoming`, headers: { 'accept-encoding': 'gzip, deflate' } },
    pid,
  );
  let next = 0;
  const sequential = await load(
    '(g1) the 20 reads one by one, one client',
    {
      url: serverUrl,
      connections: 1,
      requests: [
        { setupRequest: (request) => ({ ...request, path: BATCH_PATHS[next++ % BATCH_PATHS.length] }) },
      ],
    },
    pid,
  );
  const batch = await load(
    '(g2) POST /api/batch of the 20 reads, one client',
    {
      url: `${serverUrl}/api/batch`,
      connections: 1,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: batchBody,
    },
    pid,
  );
  return { calibration, upcoming, upcomingGzip, sequential, batch };
}

export function memberReadTargets(rows: Awaited<ReturnType<typeof memberReadScenarios>>): string {
  const { calibration, upcoming, upcomingGzip, sequential, batch } = rows;
  const a = calibration.hello;
  const itemsPerSecond = batch.requestsPerSecond * BATCH_PATHS.length;
  const share = (row: Figures) => Math.round((100 * row.requestsPerSecond) / a.requestsPerSecond);
  return [
    `targets: (f) upcoming >= 60% of (a2) → ${share(upcoming)}% (gzipped: ${share(upcomingGzip)}%; node:http's own floor (f'') ${share(calibration.sameReply)}%)`,
    `batch of 20 >= 10x 20 sequential calls → ${itemsPerSecond} items/s vs ${sequential.requestsPerSecond} items/s = ${(itemsPerSecond / sequential.requestsPerSecond).toFixed(1)}x`,
  ].join('; ');
}
