// The long fuzz pass (npm run fuzz): every registry operation on REST, MCP and A2A, on SQLite and,
// when a server answers, PostgreSQL. FUZZ_RUNS inputs per engine (default 20000), FUZZ_SEED to
// replay a pass, FUZZ_PATH (with FUZZ_SEED) to replay one input, FUZZ_ENGINES=sqlite,postgres.
import { connect } from 'node:net';

const DEFAULT_POSTGRES = 'postgres://postgres@127.0.0.1:5432/test';

function reachable(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || 5432) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

if (!process.env.TEST_POSTGRES_URL && (await reachable(DEFAULT_POSTGRES)))
  process.env.TEST_POSTGRES_URL = DEFAULT_POSTGRES;
// Imported after the environment is settled: the helpers read TEST_POSTGRES_URL when loaded.
const { engines } = await import('../test/support/databases.ts');
const { fuzzEngine } = await import('../test/support/fuzz.ts');

const runs = Number(process.env.FUZZ_RUNS ?? 20_000);
const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
const path = process.env.FUZZ_PATH;
const wanted = process.env.FUZZ_ENGINES?.split(',');
console.log(`fuzz: seed ${seed}, ${runs} inputs per engine${path ? `, replaying path ${path}` : ''}`);

let failedTotal = 0;
for (const engine of engines) {
  if (wanted && !wanted.includes(engine.name)) continue;
  if (engine.skip) {
    console.log(`${engine.name}: skipped (${engine.skip})`);
    continue;
  }
  let shown = 0;
  const report = await fuzzEngine(engine.name, {
    runs,
    seed,
    path,
    mode: 'collect',
    onProgress: (tried, failed) => {
      if (tried % 1000 === 0 && tried !== shown) {
        shown = tried;
        console.log(`  ${engine.name}: ${tried} tried, ${failed} failed`);
      }
    },
  });
  failedTotal += report.failed;
  const surfaces = Object.entries(report.bySurface)
    .map(([surface, count]) => `${surface} ${count}`)
    .join(', ');
  console.log(
    `${engine.name}: ${report.tried} inputs tried (${surfaces}), ${report.failed} failed, ${report.seconds.toFixed(1)} s`,
  );
  const outcomes = Object.entries(report.outcomes)
    .sort((a, b) => b[1] - a[1])
    .map(([outcome, count]) => `${outcome} ${count}`)
    .join(', ');
  console.log(`  answers: ${outcomes}`);
  const { OPERATIONS } = await import('../src/operations/registry.ts');
  const never = OPERATIONS.filter((op) => !report.succeeded[op.id]).map((op) => op.id);
  if (never.length) console.log(`  operations never answered with a success: ${never.join(', ')}`);
  for (const failure of report.failures.slice(0, 30)) {
    console.log(
      `  FAIL (replay: FUZZ_SEED=${seed} FUZZ_PATH=${failure.path} FUZZ_ENGINES=${engine.name} npm run fuzz)`,
    );
    console.log(`    ${failure.problem.replace(/\n/g, '\n    ')}`);
    console.log(`    call: ${failure.call}`);
  }
}
process.exitCode = failedTotal > 0 ? 1 : 0;
