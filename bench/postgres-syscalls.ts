// System calls one instance makes per highlight write on PostgreSQL, counted by strace while the
// writes run (attached after the start, detached before the stop, so loading the code is not
// counted). Unlike req/s, the count does not move with what else the machine is doing: it is the
// figure for a change to how statements reach PostgreSQL (src/storage/engine/statement-groups.ts), on a
// machine too noisy to show one in throughput. Needs strace (Debian: strace).
// Usage: node bench/postgres-syscalls.ts  (BENCH_POSTGRES_URL; BENCH_WRITES, default 3000;
// BENCH_CONNECTIONS, default 10)
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { highlightStory, mintBenchToken, startProcess, withBenchPostgres } from './support.ts';

const writes = Number(process.env.BENCH_WRITES ?? 3000);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);
const output = join(tmpdir(), `agent-commons-syscalls-${process.pid}.txt`);

if (spawnSync('strace', ['-V']).status !== 0) {
  console.error('strace is not installed (Debian: apt-get install strace)');
  process.exit(1);
}

await withBenchPostgres(async (env) => {
  const { token } = mintBenchToken(env, 'syscalls', 'events:submit_recap', false);
  const server = await startProcess(['bin/agent-commons.js', 'serve', '--no-seed'], env, '/healthz');
  const pid = server.child.pid!;
  const threads = readdirSync(`/proc/${pid}/task`).flatMap((task) => ['-p', task]);
  const strace = spawn('strace', ['-c', '-o', output, ...threads], { stdio: 'ignore' });
  // strace attaches before the load starts: give it a moment.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  let sequence = 0;
  const result = await autocannon({
    url: `${server.url}/api/ingest/highlights/pending`,
    method: 'POST',
    connections,
    amount: writes,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    requests: [{ setupRequest: (request) => ({ ...request, body: highlightStory(`sys-${sequence++}`) }) }],
  });
  const detached = new Promise((resolve) => strace.once('exit', resolve));
  strace.kill('SIGINT');
  await detached;
  await server.stop();
  const accepted = result['2xx'];
  const counts = readFileSync(output, 'utf8')
    .split('\n')
    .map((line) => /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)$/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null && match[2] !== 'total')
    .map((match) => ({ call: match[2], perWrite: Number(match[1]) / accepted }))
    .sort((a, b) => b.perWrite - a.perWrite);
  rmSync(output, { force: true });
  const total = counts.reduce((sum, row) => sum + row.perWrite, 0);
  console.log(
    `one instance on PostgreSQL, ${accepted} highlight writes acknowledged of ${writes} ` +
      `(${result.non2xx} refused), ${connections} connections: ${total.toFixed(1)} system calls per write`,
  );
  for (const row of counts.filter((row) => row.perWrite >= 0.05))
    console.log(`  ${row.call.padEnd(16)} ${row.perWrite.toFixed(2)}`);
});
