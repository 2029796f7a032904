// PostgreSQL's floor for one transaction a highlight write: pgbench (C, prepared
// statements) sends one write's statements, each write in a transaction of its own, on a fresh
// migrated database, with no service and no HTTP. The service once wrote that way; now writes
// arriving together share a transaction sent whole with its COMMIT (docs/decisions.md, "Writes: group commit") and the two-instance PostgreSQL writes pass this floor,
// which stays as the figure to set against what sharing gains. The statements: the token's
// per-minute counter (its own transaction, asynchronous commit), then BEGIN, the story, the daily
// quota row, the activity row, COMMIT, grouped as the service then sent them (src/storage/
// statement-groups.ts): BEGIN with the story and the activity row with the COMMIT, each group one
// pipeline ending in one Sync. MEMBERS quota rows: 1 is one member (every write waits for the
// previous one's lock on its quota row), 25 (the default) is 25 members.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONNECTIONS, highlightStory, mintBenchToken, SECONDS, withBenchPostgres } from './support.ts';

/** The stored story, as a SQL literal (the rows the service writes carry the same). */
const STORY = highlightStory('floor').replaceAll("'", "''");

// pgbench reads `:name` as a variable, so the script has no `::` casts and no colons in its keys.
const SCRIPT = `\\set r random(1, 1000000000000)
\\set member random(1, :members)
insert into counters (key, count, expires_at) select cast('token-' || :member as text), 1, cast(9999999999999 as bigint) where set_config('synchronous_commit', 'off', true) = 'off' on conflict (key) do update set count = counters.count + 1 returning count;
\\startpipeline
begin;
insert into highlights (id, member_id, token_id, story, status, submitted_at, updated_at, expires_at, decided_at, decided_by) values ('floor-' || :client_id || '-' || :r, :member_id, 'tok_floor', '${STORY}', 'pending', 1795797674995, 1795797674995, 1796402474995, null, null) on conflict (id) do nothing returning id;
\\endpipeline
insert into counters (key, count, expires_at) values ('highlights-' || :member, 1, 9999999999999) on conflict (key) do update set count = counters.count + 1 where counters.count < 100000000 returning count;
\\startpipeline
insert into activity (id, member_id, at, operation, surface, token_prefix, status, outcome) values ('floor-' || :client_id || '-' || :r, :member_id, 1795797674957, 'submitHighlight', 'rest', 'agt_floor0', 202, 'ok');
commit;
\\endpipeline
`;

export interface PostgresFloor {
  members: number;
  transactionsPerSecond: number;
}

/** Undefined when pgbench is not installed (Debian: postgresql-client). */
export async function postgresFloor(members: number): Promise<PostgresFloor | undefined> {
  if (spawnSync('pgbench', ['--version']).status !== 0) return undefined;
  return withBenchPostgres(async (env) => {
    // The stories' member, made as the service makes one (the highlights reference it).
    const { memberId } = mintBenchToken(env, 'pg-floor', 'events:submit_recap');
    const dir = mkdtempSync(join(tmpdir(), 'agent-commons-floor-'));
    try {
      const script = join(dir, 'write.sql');
      writeFileSync(script, SCRIPT);
      const url = new URL(env.DATABASE_URL);
      const run = spawnSync(
        'pgbench',
        [
          ...['-h', url.hostname, '-p', url.port || '5432', '-U', decodeURIComponent(url.username)],
          ...['-n', '-M', 'prepared', '-c', String(CONNECTIONS), '-j', '2', '-T', String(SECONDS)],
          ...['-D', `members=${members}`, '-D', `member_id=${memberId}`, '-f', script, url.pathname.slice(1)],
        ],
        { encoding: 'utf8' },
      );
      const tps = /tps = ([\d.]+)/.exec(run.stdout);
      if (run.status !== 0 || !tps) throw new Error(`pgbench failed: ${run.stderr || run.stdout}`);
      return { members, transactionsPerSecond: Math.round(Number(tps[1])) };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

export function postgresFloorSummary(floor: PostgresFloor | undefined): string {
  if (!floor) return "PostgreSQL's floor: not measured (pgbench is not installed)";
  return (
    `PostgreSQL floor (pgbench), pgbench sending the same statements, ${CONNECTIONS} clients, ` +
    `${floor.members === 1 ? "one member's quota row" : `${floor.members} members' quota rows`}, no service: ` +
    `${floor.transactionsPerSecond} writes/s`
  );
}
