// The reads that grow with the community, at S and at L (test/support/scale-fixture.ts; L is
// SCALE_L_ROWS rows, default 10^6): the served process's median of BENCH_SCALE_ROUNDS sequential
// requests per read (default 30, after 5 to warm), its growth from S to L, and the server's
// resident memory after each. SQLite always; PostgreSQL when it answers (BENCH_PG=0 leaves it out).
import { rmSync } from 'node:fs';
import { systemClock } from '../src/clock.ts';
import { createSession, SESSION_COOKIE } from '../src/domain/auth/sessions.ts';
import { openDatabase } from '../src/storage/database.ts';
import {
  fillScale,
  SCALE_MEMBER,
  SCALE_OPERATOR,
  type ScaleSize,
  SIZE_S,
  sizeL,
} from '../test/support/scale-fixture.ts';
import { SCALE_READS, type ScaleRead } from '../test/support/scale-reads.ts';
import {
  benchEnvironment,
  cli,
  median,
  postgresReachable,
  residentMb,
  startProcess,
  withBenchPostgres,
} from './support.ts';

const ROUNDS = Number(process.env.BENCH_SCALE_ROUNDS ?? 30);

export interface ScaleRow {
  engine: 'sqlite' | 'postgres';
  read: string;
  path: string;
  /** Median ms at S and at L, and resident MB of the server after the read's requests. */
  s: number;
  l: number;
  residentS: number;
  residentL: number;
}

interface Credentials {
  operator: string;
  member: string;
  token: string;
}

async function credentials(env: Record<string, string>): Promise<Credentials> {
  const database = openDatabase(env.DATABASE_URL);
  try {
    const session = async (id: string) =>
      `${SESSION_COOKIE}=${await createSession(database.db, systemClock, id)}`;
    return {
      operator: await session(SCALE_OPERATOR.id),
      member: await session(SCALE_MEMBER.id),
      token: JSON.parse(
        cli(
          [
            'token',
            'mint',
            '--member',
            SCALE_MEMBER.id,
            '--scopes',
            'membership:read,directory:search',
            '--json',
          ],
          env,
        ),
      ).token,
    };
  } finally {
    await database.close();
  }
}

async function timed(url: string, read: ScaleRead, who: Credentials): Promise<number> {
  const headers: Record<string, string> = {};
  if (read.as === 'operator') headers.cookie = who.operator;
  if (read.as === 'member') headers.cookie = who.member;
  if (read.as === 'bearer') headers.authorization = `Bearer ${who.token}`;
  const started = performance.now();
  const response = await fetch(url + read.path, { headers });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`${read.path}: ${response.status}`);
  return performance.now() - started;
}

/** Each read's median and the server's resident memory after it, on a database filled to `size`. */
async function measure(
  engine: 'sqlite' | 'postgres',
  env: Record<string, string>,
  size: ScaleSize,
): Promise<Map<string, { ms: number; resident: number }>> {
  const started = performance.now();
  await fillScale(engine, env.DATABASE_URL, size, Date.now());
  console.log(
    `scale ${engine} ${size.name}: ${size.rows} rows filled in ${Math.round(performance.now() - started)} ms`,
  );
  const who = await credentials(env);
  const server = await startProcess(['bin/agent-commons.js', 'serve', '--no-seed'], env, '/healthz');
  const found = new Map<string, { ms: number; resident: number }>();
  try {
    for (const read of SCALE_READS) {
      for (let i = 0; i < 5; i++) await timed(server.url, read, who);
      const times: number[] = [];
      for (let i = 0; i < ROUNDS; i++) times.push(await timed(server.url, read, who));
      found.set(read.name, { ms: median(times), resident: residentMb(server.child.pid ?? 0) });
    }
  } finally {
    await server.stop();
  }
  return found;
}

async function onEngine(engine: 'sqlite' | 'postgres'): Promise<ScaleRow[]> {
  const bySize: Map<string, { ms: number; resident: number }>[] = [];
  for (const size of [SIZE_S, sizeL()]) {
    if (engine === 'sqlite') {
      const { dir, env } = benchEnvironment('agent-commons-scale-');
      try {
        cli(['migrate'], env);
        bySize.push(await measure(engine, env, size));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    } else bySize.push(await withBenchPostgres((env) => measure(engine, env, size)));
  }
  const [small, large] = bySize;
  return SCALE_READS.map((read) => ({
    engine,
    read: read.name,
    path: read.path,
    s: small.get(read.name)?.ms ?? Number.NaN,
    l: large.get(read.name)?.ms ?? Number.NaN,
    residentS: small.get(read.name)?.resident ?? 0,
    residentL: large.get(read.name)?.resident ?? 0,
  }));
}

export async function scaleReads(): Promise<ScaleRow[]> {
  const rows = await onEngine('sqlite');
  if (process.env.BENCH_PG !== '0' && (await postgresReachable())) rows.push(...(await onEngine('postgres')));
  return rows;
}

export function reportScaleReads(rows: ScaleRow[]): void {
  const { rows: lRows, members } = sizeL();
  console.log(
    `reads at scale: S 1000 rows, L ${lRows} rows (${members} members); median of ${ROUNDS} requests`,
  );
  console.table(
    rows.map((row) => ({
      engine: row.engine,
      read: row.read,
      'p50 S ms': row.s.toFixed(2),
      'p50 L ms': row.l.toFixed(2),
      growth: `x${(row.l / row.s).toFixed(1)}`,
      'resident S / L MB': `${row.residentS} / ${row.residentL}`,
    })),
  );
  console.log('scale target: p50 at L within 3x of S for every read');
}
