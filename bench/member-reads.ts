// The member-read scenarios: the anonymous upcoming-events read, and a 20-item batch against the same 20
// reads made one after another by one client.
import { MS, systemClock } from '../src/clock.ts';
import { markRefreshed } from '../src/domain/events/events.ts';
import { openDatabase } from '../src/storage/database.ts';
import { type Figures, load, median } from './support.ts';
import { WRK_INSTALLED, wrkLoad } from './wrk.ts';

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

/** Rounds of the two comparisons; each round measures every scenario once, in turn. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

export interface MemberReadRound {
  calibration: { hello: Figures; sameReply: Figures };
  upcoming: Figures;
  upcomingGzip: Figures;
  sequential: Figures;
  batch: Figures;
  /**
   * node:http hello, the events-list floor, the kept-bytes events-list floor and the events list
   * again with wrk, when it is installed (see wrk.ts). The kept-bytes floor sends the events list's
   * bytes from a buffer node:http need not encode: the stricter floor, printed beside.
   */
  withWrk?: { hello: Figures; sameReply: Figures; keptBytes: Figures; upcoming: Figures };
}

/**
 * The node:http server of node:http hello: `/` is the hello world, `/upcoming` sends the events
 * list's answer (the events-list floor), `/upcoming-bytes` the same bytes from a kept buffer (the
 * kept-bytes floor).
 */
export interface NodeFloor {
  url: string;
  pid: number;
}

const share = (row: Figures, baseline: Figures) =>
  Math.round((100 * row.requestsPerSecond) / baseline.requestsPerSecond);
const batchGain = (round: MemberReadRound) =>
  (round.batch.requestsPerSecond * BATCH_PATHS.length) / round.sequential.requestsPerSecond;

/**
 * node:http is measured again right before the events list: the hello world and the same answer as
 * the events list with no work (the events-list floor). A machine's speed drifts over the minutes a
 * run takes (by a fifth within a minute at times), so the events list is compared with measurements
 * taken side by side with it, and the
 * whole comparison is repeated in `ROUNDS` rounds: each ratio is taken within its round.
 */
export async function memberReadScenarios(
  serverUrl: string,
  pid: number,
  node: NodeFloor,
): Promise<MemberReadRound[]> {
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
  const rounds: MemberReadRound[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const calibration = {
      hello: await load('node:http hello, again before the events list', { url: `${node.url}/` }, node.pid),
      sameReply: await load('node:http floor, events list reply', { url: `${node.url}/upcoming` }, node.pid),
    };
    const upcoming = await load('anonymous events list', { url: `${serverUrl}/api/events/upcoming` }, pid);
    // The same read as most HTTP clients send it (fetch, Python requests, Go): the answer goes gzipped.
    const upcomingGzip = await load(
      'anonymous events list, gzip',
      { url: `${serverUrl}/api/events/upcoming`, headers: { 'accept-encoding': 'gzip, deflate' } },
      pid,
    );
    let next = 0;
    const sequential = await load(
      'twenty reads one by one, one client',
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
      'batch of twenty reads, one client',
      {
        url: `${serverUrl}/api/batch`,
        connections: 1,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: batchBody,
      },
      pid,
    );
    const withWrk = WRK_INSTALLED
      ? {
          hello: wrkLoad('node:http hello, wrk', `${node.url}/`, node.pid),
          sameReply: wrkLoad('node:http floor, events list reply, wrk', `${node.url}/upcoming`, node.pid),
          keptBytes: wrkLoad(
            'node:http floor, events list from kept bytes, wrk',
            `${node.url}/upcoming-bytes`,
            node.pid,
          ),
          upcoming: wrkLoad('anonymous events list, wrk', `${serverUrl}/api/events/upcoming`, pid),
        }
      : undefined;
    rounds.push({ calibration, upcoming, upcomingGzip, sequential, batch, withWrk });
  }
  return rounds;
}

/** The round whose events-list share of node:http hello is the median: its rows are the ones the table shows. */
export function medianRound(rounds: MemberReadRound[]): MemberReadRound {
  const sorted = [...rounds].sort(
    (x, y) => share(x.upcoming, x.calibration.hello) - share(y.upcoming, y.calibration.hello),
  );
  return sorted[Math.floor(sorted.length / 2)];
}

export function memberReadTargets(rounds: MemberReadRound[]): string {
  const each = (figure: (round: MemberReadRound) => number, unit: string, digits = 0) => {
    const values = rounds.map(figure);
    return `${median(values).toFixed(digits)}${unit} (rounds: ${values.map((v) => v.toFixed(digits)).join(', ')})`;
  };
  return [
    `targets, median of ${rounds.length} rounds: anonymous events list >= 60% of node:http hello → ${each((r) => share(r.upcoming, r.calibration.hello), '%')}`,
    `gzip ${each((r) => share(r.upcomingGzip, r.calibration.hello), '%')}`,
    `its node:http floor ${each((r) => share(r.calibration.sameReply, r.calibration.hello), '%')}`,
    `batch of 20 >= 10x 20 sequential calls → ${each(batchGain, 'x', 1)}`,
    rounds[0].withWrk
      ? `with wrk (the server sets the pace): events list ${each((r) => share(r.withWrk!.upcoming, r.withWrk!.hello), '%')}, its node:http floor ${each((r) => share(r.withWrk!.sameReply, r.withWrk!.hello), '%')}; ` +
        `events list >= 90% of its node:http floor → ${each((r) => share(r.withWrk!.upcoming, r.withWrk!.sameReply), '%')}, ` +
        `of the stricter floor, the same bytes from a kept buffer, ${each((r) => share(r.withWrk!.upcoming, r.withWrk!.keptBytes), '%')}`
      : 'wrk is not installed: no server-bound figures (apt-get install wrk)',
  ].join('; ');
}
