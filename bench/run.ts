// npm run bench: the scenarios side by side, one run. BENCH_SECONDS and BENCH_CONNECTIONS
// shorten or widen it; the figures the issues quote come from the defaults (10 s, 50 connections).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CONNECTIONS,
  cli,
  type Figures,
  load,
  pinLoadGenerator,
  report,
  residentMb,
  SECONDS,
  startProcess,
} from './support.ts';

const dir = mkdtempSync(join(tmpdir(), 'agent-commons-bench-'));
const env = {
  DATABASE_URL: `sqlite:${join(dir, 'bench.db')}`,
  SEED_DEMO: 'false',
  LOG_LEVEL: 'warn',
  LIMIT_TOKEN_PER_MINUTE: '100000000',
  LIMIT_HIGHLIGHTS_PER_DAY: '100000000',
};

function mint(sandbox: boolean): string {
  const member = JSON.parse(
    cli(
      [
        'member',
        'create',
        '--email',
        `bench-${sandbox}@example.org`,
        '--name',
        'Bench',
        '--tier',
        'core',
        '--json',
      ],
      env,
    ),
  );
  const args = [
    'token',
    'mint',
    '--member',
    member.id,
    '--scopes',
    'events:submit_recap,read:public',
    '--json',
  ];
  return JSON.parse(cli(sandbox ? [...args, '--sandbox'] : args, env)).token;
}

console.log(
  `agent-commons benchmark: ${CONNECTIONS} connections, ${SECONDS} s per scenario, database ${env.DATABASE_URL}`,
);
const rows: Figures[] = [];
try {
  const hello = await startProcess(['bench/hello-server.mjs'], {}, '/');
  rows.push(await load('(a) node:http hello world', { url: `${hello.url}/` }, hello.child.pid));
  await hello.stop();
  const floor = await startProcess(['bench/fastify-floor.mjs'], {}, '/');
  const floorFigures = await load(
    "(a') Fastify, same-size reply, no work",
    { url: `${floor.url}/` },
    floor.child.pid,
  );
  await floor.stop();

  cli(['migrate'], env);
  const token = mint(false);
  const sandboxToken = mint(true);
  const server = await startProcess(['bin/agent-commons.js', 'serve', '--no-seed'], env, '/healthz');
  const rssAtStart = residentMb(server.child.pid!);

  rows.push(
    await load(
      '(b) GET /api/agent/setup-check, bearer',
      {
        url: `${server.url}/api/agent/setup-check`,
        headers: { authorization: `Bearer ${token}` },
      },
      server.child.pid,
    ),
  );
  const story = (id: string) =>
    JSON.stringify({
      id,
      event_title: 'Bench night',
      dek: 'A short recap of the night.',
      date: '2026-07-16',
    });
  let sequence = 0;
  rows.push(
    await load(
      '(c) POST highlight, sandbox token',
      {
        url: `${server.url}/api/ingest/highlights/pending`,
        method: 'POST',
        headers: { authorization: `Bearer ${sandboxToken}`, 'content-type': 'application/json' },
        body: story('bench-sandbox'),
      },
      server.child.pid,
    ),
  );
  rows.push(
    await load(
      '(d) POST highlight, real, SQLite',
      {
        url: `${server.url}/api/ingest/highlights/pending`,
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        requests: [
          { setupRequest: (request) => ({ ...request, body: story(`bench-${process.pid}-${++sequence}`) }) },
        ],
      },
      server.child.pid,
    ),
  );
  const rssAfter = residentMb(server.child.pid!);
  await server.stop();

  report([rows[0], floorFigures, ...rows.slice(1)], rows[0]);
  const [a, b, , d] = rows;
  console.log(`resident memory of the service: ${rssAtStart} MB after start, ${rssAfter} MB after the run`);
  console.log(
    `targets: (b) >= 50% of (a) → ${Math.round((100 * b.requestsPerSecond) / a.requestsPerSecond)}%, p99 < 10 ms → ${b.p99} ms; (d) >= 5000 writes/s → ${d.requestsPerSecond}`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
