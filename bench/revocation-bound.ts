// How long a revocation or a demotion made through one PostgreSQL instance keeps working on another
// that had the token's lookup cached (docs/decisions.md#tokens): two instances on one database.
// Revocation: each round puts a fresh token in instance B's cache, revokes it through instance A's
// API, and from the moment A's answer arrives asks B (the member's pending stories, a bearer read)
// until B refuses (401). Demotion: each round has B serve a core member's token (the resource list,
// scope `resources:read`), an operator sets the member to `member`, a tier without that scope,
// through A's MCP tool (ic_admin_member_set_tier), and B is asked until it refuses (403); the member
// is set back to core, and served again by B, before the next round. Printed: the delay to the first
// refusal and how many requests B still served after the change's answer, idle and with B under
// load from another token.
// Run: node bench/revocation-bound.ts   (BENCH_BOUND_ROUNDS, default 40 per phase)
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import pg from 'pg';
import { sha256 } from '../src/secrets.ts';
import { mcpToolCall, mintBenchToken, startProcess, withBenchPostgres } from './support.ts';

const ROUNDS = Number(process.env.BENCH_BOUND_ROUNDS ?? 40);
/** What the demoted member's token reads: a tier below `resident` is refused it. */
const RESOURCES = '/api/resources/list';
/** Waited for at most, for a change to show on the other instance or for B to serve again. */
const GIVE_UP_MS = 10_000;

interface Round {
  ms: number;
  servedAfter: number;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

function summary(name: string, changes: string, rounds: Round[]): string {
  const ms = rounds.map((r) => r.ms).sort((x, y) => x - y);
  const served = rounds.reduce((sum, r) => sum + r.servedAfter, 0);
  return (
    `${name}: ${rounds.length} ${changes}; first refusal on the other instance p50 ${percentile(ms, 50).toFixed(2)} ms, ` +
    `p99 ${percentile(ms, 99).toFixed(2)} ms, max ${ms[ms.length - 1].toFixed(2)} ms; ` +
    `requests still served after the change's answer: ${served}`
  );
}

await withBenchPostgres(async (env) => {
  const base = mintBenchToken(env, 'bound', 'events:submit_recap');
  const load = mintBenchToken(env, 'bound-load', 'events:submit_recap');
  const demoted = mintBenchToken(env, 'bound-demoted', 'resources:read');
  const operator = mintBenchToken(env, 'bound-operator', 'admin:tier_review', false, 'operator');
  const sql = new pg.Client({ connectionString: env.DATABASE_URL });
  await sql.connect();
  // Two tier changes a round, each an operator mutation.
  const served = { ...env, LIMIT_OPERATOR_MUTATIONS_PER_DAY: '1000000' };
  const [a, b] = await Promise.all(
    [0, 1].map(() => startProcess(['bin/agent-commons.js', 'serve', '--no-seed'], served, '/healthz')),
  );
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

  /** Asks B with `token` from the moment the change was answered until B refuses it with `refusal`. */
  const untilRefused = async (token: string, refusal: number, path?: string): Promise<Round> => {
    const answered = performance.now();
    let servedAfter = 0;
    for (;;) {
      const status = await ask(b.url, token, 'GET', path);
      if (status === refusal) break;
      if (status !== 200) throw new Error(`unexpected ${status}`);
      servedAfter++;
      if (performance.now() - answered > GIVE_UP_MS) throw new Error('still served after 10 s');
    }
    return { ms: performance.now() - answered, servedAfter };
  };

  const revocations = async (): Promise<Round[]> => {
    const rounds: Round[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const token = await freshToken();
      // Twice: the second answer comes from B's cache.
      for (let n = 0; n < 2; n++) if ((await ask(b.url, token)) !== 200) throw new Error('not served');
      if ((await ask(a.url, token, 'POST', '/api/agent/token/revoke')) !== 200)
        throw new Error('not revoked');
      rounds.push(await untilRefused(token, 401));
    }
    return rounds;
  };

  /** The operator's MCP call through instance A; resolves once A has answered that it applied it. */
  const setTier = async (tier: string): Promise<void> => {
    const call = mcpToolCall(
      '/api/mcp',
      'ic_admin_member_set_tier',
      { member_id: demoted.memberId, tier, confirm: true },
      operator.token,
    );
    const response = await fetch(a.url + call.url, {
      method: 'POST',
      headers: call.headers,
      body: call.body,
    });
    const answer = await response.json();
    if (answer.result?.structuredContent?.applied !== true)
      throw new Error(`tier ${tier} not applied: ${JSON.stringify(answer)}`);
  };

  const demotions = async (): Promise<Round[]> => {
    const rounds: Round[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      // Served twice (the second from B's cache), then demoted through A.
      for (let n = 0; n < 2; n++)
        if ((await ask(b.url, demoted.token, 'GET', RESOURCES)) !== 200) throw new Error('not served');
      await setTier('member');
      rounds.push(await untilRefused(demoted.token, 403, RESOURCES));
      await setTier('core');
      const restored = performance.now();
      while ((await ask(b.url, demoted.token, 'GET', RESOURCES)) !== 200)
        if (performance.now() - restored > GIVE_UP_MS) throw new Error('not served again after 10 s');
    }
    return rounds;
  };

  try {
    console.log(summary('idle', 'revocations', await revocations()));
    console.log(summary('idle', 'demotions', await demotions()));
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
    const revokedUnderLoad = await revocations();
    const demotedUnderLoad = await demotions();
    loading.stop();
    const underLoad = 'instance B under load (20 connections asking for the pending list)';
    console.log(summary(underLoad, 'revocations', revokedUnderLoad));
    console.log(summary(underLoad, 'demotions', demotedUnderLoad));
  } finally {
    await sql.end();
    await Promise.all([a.stop(), b.stop()]);
  }
});
