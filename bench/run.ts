// npm run bench: every scenario side by side, one run. BENCH_SECONDS and BENCH_CONNECTIONS
// shorten or widen it; docs/benchmarks.md's figures come from the defaults (10 s, 50 connections).
// BENCH_ONLY=metrics runs only what metrics cost against the bearer read (bench/metrics-cost.ts).
// BENCH_ONLY=pg runs only the two-instance PostgreSQL writes (bench/postgres-writes.ts); the full
// run measures them too when PostgreSQL answers (BENCH_PG=0 leaves them out).
// BENCH_ONLY=mcp runs only the MCP transport comparison (bench/mcp-transports.ts); BENCH_ONLY=signed
// only the signed setup-check rows, beside the bearer call and its floor (bench/signed-requests.ts,
// BENCH_SIGNED_ROUNDS interleaved rounds; the full run measures one); BENCH_ONLY=surfaces one
// bearer read on REST, MCP and A2A (bench/surfaces.ts), then the upcoming-events list on REST and
// on both MCP eras (bench/mcp-eras.ts).
// BENCH_ONLY=scale runs only the reads that grow with the community at S and L
// (bench/scale-reads.ts; SCALE_L_ROWS, default 10^6).

import { rmSync } from 'node:fs';
import { systemClock } from '../src/clock.ts';
import { createSession, SESSION_COOKIE } from '../src/domain/auth/sessions.ts';
import { openDatabase } from '../src/storage/database.ts';
import { mcpEraRounds, reportMcpEras } from './mcp-eras.ts';
import { mcpTransportRounds, mcpTransportSummary } from './mcp-transports.ts';
import { medianRound, memberReadScenarios, memberReadTargets, seedMemberReads } from './member-reads.ts';
import { metricsRounds, metricsSummary, recordingNanos } from './metrics-cost.ts';
import { ownCodePerRead } from './own-code.ts';
import { postgresFloor, postgresFloorSummary } from './postgres-floor.ts';
import { MEMBERS, postgresWrites, postgresWritesSummary } from './postgres-writes.ts';
import { researchBench } from './research-run.ts';
import { reportScaleReads, scaleReads } from './scale-reads.ts';
import { reportSetupCheckRounds, setupCheckRounds } from './setup-check-rounds.ts';
import { prepareSignedTokens, SIGNED_FLOOR_SERVE, signedRounds, signedSummary } from './signed-requests.ts';
import {
  benchEnvironment,
  CONNECTIONS,
  cli,
  type Figures,
  highlightStory,
  load,
  mcpToolCall,
  mintBenchToken,
  pinLoadGenerator,
  postgresReachable,
  report,
  residentMb,
  SECONDS,
  startProcess,
} from './support.ts';
import { reportSurfaces, surfaceRounds } from './surfaces.ts';

const { dir, env } = benchEnvironment('agent-commons-bench-');

function mint(sandbox: boolean, scopes = 'events:submit_recap,read:public', label = String(sandbox)) {
  return mintBenchToken(env, label, scopes, sandbox);
}

/** A browser session for the member, created in the bench database before the server starts. */
async function sessionCookie(memberId: string): Promise<string> {
  const database = openDatabase(env.DATABASE_URL);
  try {
    return `${SESSION_COOKIE}=${await createSession(database.db, systemClock, memberId)}`;
  } finally {
    await database.close();
  }
}

/** One call before the load, so a scenario that only produces refusals cannot pass for a fast one. */
async function expectMembership(
  label: string,
  request: { url: string; method?: string; headers: Record<string, string>; body?: string },
) {
  const response = await fetch(request.url, request);
  const text = await response.text();
  if (response.status !== 200 || !text.includes('"display_name"') || text.includes('"isError"'))
    throw new Error(`${label}: ${response.status} ${text}`);
}

// Servers run on core 0 (startProcess); this process, and autocannon in it, on core 1.
const pinned = pinLoadGenerator();
console.log(
  `agent-commons benchmark: ${CONNECTIONS} connections, ${SECONDS} s per scenario, database ${env.DATABASE_URL}${pinned ? '; servers on core 0, load generator on core 1' : '; cores not pinned'}`,
);
const only = process.env.BENCH_ONLY;
if (only === 'metrics') {
  // What metrics cost per request against the bearer read (bench/metrics-cost.ts).
  try {
    cli(['migrate'], env);
    const { token } = mint(false);
    const rounds = await metricsRounds(env, token);
    report(rounds.flatMap(({ plain, served }) => [plain, served]));
    console.log(metricsSummary(rounds, recordingNanos()));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  process.exit(0);
}
if (only === 'pg') {
  // Durable highlight writes on two instances of one PostgreSQL database (bench/postgres-writes.ts).
  const writes = await postgresWrites();
  const floor = await postgresFloor(MEMBERS);
  report(writes.instances);
  console.log(postgresWritesSummary(writes));
  console.log(postgresFloorSummary(floor));
  process.exit(0);
}
if (only === 'scale') {
  // The reads that grow with the community, at S and L on each engine (bench/scale-reads.ts).
  rmSync(dir, { recursive: true, force: true });
  reportScaleReads(await scaleReads());
  process.exit(0);
}
if (only !== undefined && only !== 'mcp' && only !== 'signed' && only !== 'surfaces')
  throw new Error(
    `BENCH_ONLY=${only}: only 'metrics', 'mcp', 'pg', 'scale', 'signed' or 'surfaces' runs alone`,
  );
if (only === 'surfaces') {
  try {
    cli(['migrate'], env);
    const reader = mint(false, 'membership:read', 'membership');
    const lister = mint(false, 'events:read_upcoming', 'upcoming');
    await seedMemberReads(env.DATABASE_URL);
    const server = await startProcess(['bin/agent-commons.js', 'serve', '--no-seed'], env, '/healthz');
    const rounds = await surfaceRounds(server.url, server.child.pid!, reader.token);
    const eras = await mcpEraRounds(server.url, server.child.pid!, lister.token);
    await server.stop();
    reportSurfaces(rounds);
    reportMcpEras(eras);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  process.exit(0);
}
if (only === 'signed') {
  try {
    cli(['migrate'], env);
    const tokens = await prepareSignedTokens(env);
    const server = await startProcess(SIGNED_FLOOR_SERVE, env, '/healthz');
    const signed = await signedRounds(server, tokens, Number(process.env.BENCH_SIGNED_ROUNDS ?? 3));
    await server.stop();
    report(signed.flatMap((side) => side.rounds));
    console.log(signedSummary(signed));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  process.exit(0);
}
if (only === 'mcp') {
  try {
    cli(['migrate'], env);
    await seedMemberReads(env.DATABASE_URL);
    const rounds = await mcpTransportRounds(env);
    report(rounds.flatMap(({ ours, sdk }) => [ours, sdk]));
    console.log(mcpTransportSummary(rounds));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  process.exit(0);
}
const rows: Figures[] = [];
try {
  const hello = await startProcess(['bench/hello-server.mjs'], {}, '/');
  rows.push(await load('node:http hello', { url: `${hello.url}/` }, hello.child.pid));
  // The bearer read's floor: node:http sending setup-check's answer and headers, no work. The bearer
  // read cannot pass it.
  const setupCheckFloor = await load(
    'node:http floor, setup-check reply',
    { url: `${hello.url}/setup-check` },
    hello.child.pid,
  );
  // The hello server stays up (idle) to measure node:http again next to the events list (see
  // member-reads.ts).
  const floor = await startProcess(['bench/fastify-floor.mjs'], {}, '/');
  const floorFigures = await load(
    'Fastify floor, setup-check-size reply',
    { url: `${floor.url}/` },
    floor.child.pid,
  );
  const upcomingFloor = await load(
    'Fastify floor, events-list-size reply',
    { url: `${floor.url}/upcoming` },
    floor.child.pid,
  );
  await floor.stop();

  cli(['migrate'], env);
  const { token } = mint(false);
  const { token: sandboxToken } = mint(true);
  const reader = mint(false, 'membership:read', 'membership');
  const lister = mint(false, 'events:read_upcoming', 'upcoming');
  const cookie = await sessionCookie(reader.memberId);
  const signedTokens = await prepareSignedTokens(env);
  await seedMemberReads(env.DATABASE_URL);
  const server = await startProcess(['bin/agent-commons.js', 'serve', '--no-seed'], env, '/healthz');
  const rssAtStart = residentMb(server.child.pid!);

  rows.push(
    await load(
      'bearer read, GET /api/agent/setup-check',
      {
        url: `${server.url}/api/agent/setup-check`,
        headers: { authorization: `Bearer ${token}` },
      },
      server.child.pid,
    ),
  );
  let sequence = 0;
  rows.push(
    await load(
      'sandbox highlight write',
      {
        url: `${server.url}/api/ingest/highlights/pending`,
        method: 'POST',
        headers: { authorization: `Bearer ${sandboxToken}`, 'content-type': 'application/json' },
        body: highlightStory('bench-sandbox'),
      },
      server.child.pid,
    ),
  );
  rows.push(
    await load(
      'durable highlight write, SQLite',
      {
        url: `${server.url}/api/ingest/highlights/pending`,
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        requests: [
          {
            setupRequest: (request) => ({
              ...request,
              body: highlightStory(`bench-${process.pid}-${++sequence}`),
            }),
          },
        ],
      },
      server.child.pid,
    ),
  );

  // The membership read on the three surfaces: REST has only the session-only GET /api/tier/me.
  const membershipReads = {
    rest: { url: `${server.url}/api/tier/me`, headers: { cookie } },
    mcp: mcpToolCall(`${server.url}/api/mcp`, 'ic_get_my_membership', {}, reader.token),
    a2a: {
      url: `${server.url}/api/a2a`,
      method: 'POST' as const,
      headers: { authorization: `Bearer ${reader.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tasks/send',
        params: { capability: 'ic_get_my_membership', arguments: {} },
      }),
    },
  };
  for (const [label, request] of Object.entries(membershipReads)) await expectMembership(label, request);
  const membershipRows = [
    await load('membership read, session (REST)', membershipReads.rest, server.child.pid),
    await load('membership read, MCP', membershipReads.mcp, server.child.pid),
    await load('membership read, A2A', membershipReads.a2a, server.child.pid),
  ];
  rows.push(...membershipRows);
  // The MCP and A2A targets: each against the same operation's bearer REST row (bench/surfaces.ts).
  const surfaceComparison = await surfaceRounds(server.url, server.child.pid!, reader.token);
  const eraComparison = await mcpEraRounds(server.url, server.child.pid!, lister.token);
  const memberReadRounds = await memberReadScenarios(server.url, server.child.pid!, {
    url: hello.url,
    pid: hello.child.pid!,
  });
  const setupChecks = await setupCheckRounds(
    { url: hello.url, pid: hello.child.pid! },
    { url: server.url, pid: server.child.pid! },
    token,
  );
  const memberReads = medianRound(memberReadRounds);
  await hello.stop();
  const rssAfter = residentMb(server.child.pid!);
  await server.stop();
  // The signed rows on a server of their own, which carries the signed request's floor (bench/signed-floor.mjs).
  const signedServer = await startProcess(SIGNED_FLOOR_SERVE, env, '/healthz');
  const signed = await signedRounds(signedServer, signedTokens, 1);
  await signedServer.stop();
  const ownCode = await ownCodePerRead(env);
  const ownCodeBearer = await ownCodePerRead(env, '/api/agent/setup-check', {
    authorization: `Bearer ${token}`,
  });
  const mcpRounds = await mcpTransportRounds(env);
  // The PostgreSQL writes in the same run as the SQLite ones, so that every row comes from one run.
  const measurePostgres = process.env.BENCH_PG !== '0' && (await postgresReachable());
  const postgres = measurePostgres
    ? { writes: await postgresWrites(), floor: await postgresFloor(MEMBERS) }
    : undefined;

  const [firstHello, bearerRead, , durableWrite, restRead, mcpRead, a2aRead] = rows;
  const { calibration } = memberReads;
  // In the order measured; each row against the hello world measured last before it.
  report(
    [
      firstHello,
      setupCheckFloor,
      floorFigures,
      upcomingFloor,
      ...rows.slice(1),
      calibration.hello,
      calibration.sameReply,
      memberReads.upcoming,
      memberReads.upcomingGzip,
      memberReads.sequential,
      memberReads.batch,
    ],
    [firstHello, calibration.hello],
  );
  console.log(`resident memory of the service: ${rssAtStart} MB after start, ${rssAfter} MB after the run`);
  console.log(
    // One row against a node:http hello measured minutes before it: the bearer read's target is read
    // on the warm rounds (each against the node:http hello just before it), printed below.
    `targets: bearer read as the first row after the start → ${Math.round((100 * bearerRead.requestsPerSecond) / firstHello.requestsPerSecond)}% of node:http hello ` +
      `(its node:http floor ${Math.round((100 * setupCheckFloor.requestsPerSecond) / firstHello.requestsPerSecond)}%; >= 75% is read on the warm rounds below), p99 < 5 ms → ${bearerRead.p99} ms; ` +
      `durable highlight write, SQLite >= 10000 writes/s → ${durableWrite.requestsPerSecond}`,
  );
  const ratio = (row: Figures) => Math.round((100 * row.requestsPerSecond) / restRead.requestsPerSecond);
  console.log(
    `membership read, session >= 80% of the bearer read → ${Math.round((100 * restRead.requestsPerSecond) / bearerRead.requestsPerSecond)}%; ` +
      `membership over MCP ${mcpRead.requestsPerSecond} req/s (${ratio(mcpRead)}% of the session row), over A2A ` +
      `${a2aRead.requestsPerSecond} req/s (${ratio(a2aRead)}%): for scale only, the MCP and A2A targets are set against the bearer REST row below`,
  );
  if (postgres) {
    report(postgres.writes.instances);
    console.log(postgresWritesSummary(postgres.writes));
    console.log(
      `durable highlight writes, PostgreSQL against SQLite: ${Math.round((100 * postgres.writes.total) / durableWrite.requestsPerSecond)}% of SQLite's ${durableWrite.requestsPerSecond} writes/s`,
    );
    console.log(postgresFloorSummary(postgres.floor));
  } else
    console.log(
      `durable highlight writes on PostgreSQL not measured: ${process.env.BENCH_PG === '0' ? 'BENCH_PG=0' : 'PostgreSQL does not answer at BENCH_POSTGRES_URL'}`,
    );
  reportSurfaces(surfaceComparison);
  reportMcpEras(eraComparison);
  report(signed.flatMap((side) => side.rounds));
  console.log(signedSummary(signed));
  reportSetupCheckRounds(setupChecks);
  console.log(`the member-read comparisons, round by round (the table above shows the median round):`);
  // Each round's two hello worlds (autocannon's, then wrk's) are the baselines of the rows after them.
  const hellos = new Set(
    memberReadRounds.flatMap((round) => [round.calibration.hello, round.withWrk?.hello]),
  );
  const roundRows = memberReadRounds.flatMap((round, index) =>
    [
      round.calibration.hello,
      round.calibration.sameReply,
      round.upcoming,
      round.upcomingGzip,
      round.sequential,
      round.batch,
      ...(round.withWrk
        ? [round.withWrk.hello, round.withWrk.sameReply, round.withWrk.keptBytes, round.withWrk.upcoming]
        : []),
    ].map((row) => ({ row, numbered: { ...row, name: `${index + 1}: ${row.name}` } })),
  );
  report(
    roundRows.map(({ numbered }) => numbered),
    roundRows.filter(({ row }) => hellos.has(row)).map(({ numbered }) => numbered),
  );
  console.log(memberReadTargets(memberReadRounds));
  console.log(
    `own code in process (no socket, no node:http): anonymous events list ${ownCode.toFixed(2)} µs; bearer read ${ownCodeBearer.toFixed(2)} µs`,
  );
  report(mcpRounds.flatMap(({ ours, sdk }) => [ours, sdk]));
  console.log(mcpTransportSummary(mcpRounds));
  // The reads that grow with the community, at S and L (BENCH_SCALE=0 leaves them out of this run).
  if (process.env.BENCH_SCALE !== '0') reportScaleReads(await scaleReads());
  // Research at 100k and 1M passages (`npm run bench:research` runs this part alone; BENCH_RESEARCH=0
  // leaves it out of this run).
  if (process.env.BENCH_RESEARCH !== '0') {
    await researchBench([100_000, 1_000_000]);
    console.log('research targets: relevance >= minisearch; ask p50 < 15 ms and p99 < 100 ms at 1M passages');
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
