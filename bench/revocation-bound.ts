// How long a revocation made through one PostgreSQL instance keeps working on another that had the
// token's lookup cached (docs/decisions.md#tokens): two instances on one database; each round puts a
// fresh token in instance B's cache, revokes it through instance A's API, and from the moment A's
// answer arrives asks B (the member's pending stories, a bearer read) until B refuses. Printed: the delay to the first refusal and how many
// requests B still served with the revoked token, idle and with B under load from another token.
// Run: node --import tsx bench/revocation-bound.ts   (BENCH_BOUND_ROUNDS, default 40 per phase)
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import pg from 'pg';
import { sha256 } from '../src/secrets.ts';
import { mintBenchToken, startProcess, withBenchPostgres } from './support.ts';

const ROUNDS = Number(process.env.BENCH_BOUND_ROUNDS ?? 40);

interface Round {
  ms: number;
  servedAfter: number;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

function summary(name: string, rounds: Round[]): string {
  const ms = rounds.map((r) => r.ms).sort((x, y) => x - y);
  const served = rounds.reduce((sum, r) => sum + r.servedAfter, 0);
  return (
    `${name}: ${rounds.length} revocations; first refusal on the other instance p50 ${percentile(ms, 50).toFixed(2)} ms, ` +
    `p99 ${percentile(ms, 99).toFixed(2)} ms, max ${ms[ms.length - 1].toFixed(2)} ms; ` +
    `requests still served after the revocation's answer: ${served}`
  );
}

await withBenchPostgres(async (env) => {
  const base = mintBenchToken(env, 'bound', 'events:submit_recap');
  const load = mintBenchToken(env, 'bound-load', 'events:submit_recap');
  const [a, b] = await Promise.all(
    [0, 1].map(() => startProcess(['bin/agent-commons.js', 'serve', '--no-seed'], env, '/healthz')),
  );
  const sql = new pg.Client({ connectionString: env.DATABASE_URL });
  await sql.connect();
  const columns = (
    await sql.query(
      `select column_name from information_schema.columns where table_name = 'tokens' and column_name not in ('id', 'hash')`,
    )
  ).rows.map((row) => `"${row.column_name}"`);
  /** A copy of the base token under a new secret (the CLI's mint takes a second a token). */
  const freshToken = async (): Promise<string> => {
    const plaintext = `agt_${randomBytes(32).toString('base64url')}`;
    await sql.query(
      `insert into tokens (id, hash, ${columns.join(', ')})
       select $1, $2, ${columns.join(', ')} from tokens where hash = $3`,
      [`tok_${randomBytes(8).toString('hex')}`, sha256(plaintext), sha256(base.token)],
    );
    return plaintext;
  };
  const ask = (url: string, token: string, method = 'GET', path = '/api/ingest/highlights/pending') =>
    fetch(url + path, { method, headers: { authorization: `Bearer ${token}` } }).then(async (response) => {
      await response.arrayBuffer();
      return response.status;
    });

  const phase = async (): Promise<Round[]> => {
    const rounds: Round[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const token = await freshToken();
      // Twice: the second answer comes from B's cache.
      for (let n = 0; n < 2; n++) if ((await ask(b.url, token)) !== 200) throw new Error('not served');
      if ((await ask(a.url, token, 'POST', '/api/agent/token/revoke')) !== 200)
        throw new Error('not revoked');
      const answered = performance.now();
      let servedAfter = 0;
      for (;;) {
        const status = await ask(b.url, token);
        if (status === 401) break;
        if (status !== 200) throw new Error(`unexpected ${status}`);
        servedAfter++;
        if (performance.now() - answered > 10_000) throw new Error('still served after 10 s');
      }
      rounds.push({ ms: performance.now() - answered, servedAfter });
    }
    return rounds;
  };

  try {
    console.log(summary('idle', await phase()));
    const loading = autocannon(
      {
        url: `${b.url}/api/ingest/highlights/pending`,
        connections: 20,
        duration: 600,
        headers: { authorization: `Bearer ${load.token}` },
      },
      () => {},
    );
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const underLoad = await phase();
    loading.stop();
    console.log(summary('instance B under load (20 connections asking for the pending list)', underLoad));
  } finally {
    await sql.end();
    await Promise.all([a.stop(), b.stop()]);
  }
});
