// A process that does what aborted the service on Node 24.19+ with better-sqlite3 12: statements
// finalized by a garbage collection that runs outside a JavaScript context. It serves the real app
// on a SQLite file, prepares and drops many statements with a forced collection between requests,
// then lets worker threads open the same file, prepare statements and exit with them still waiting
// for the collector (a thread's teardown is where the old binding aborted every time). Run with
// --expose-gc; it must exit 0.  Usage: node --expose-gc test/support/gc-churn.ts sqlite:FILE
import { isMainThread, Worker, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';

const exposed = (globalThis as { gc?: () => void }).gc;
if (!exposed) throw new Error('run with --expose-gc');
const collect: () => void = exposed;

if (isMainThread) await main(process.argv[2]!);
else await threadChurn(workerData as string);

async function main(databaseUrl: string) {
  const { buildApp } = await import('../../src/app.ts');
  const { loadConfig } = await import('../../src/config.ts');
  const { createDeps } = await import('../../src/deps.ts');
  const config = loadConfig({}, { databaseUrl, port: 0, host: '127.0.0.1', seedDemo: true });
  const deps = await createDeps(config);
  await (await import('../../src/domain/demo/seed.ts')).seedNewDatabase(deps);
  const app = await buildApp(deps, { logger: false });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  const sqlite = deps.database.sqlite!;

  const paths = ['/api/events/upcoming', '/api/directory/members', '/healthz', '/nope'];
  for (let round = 0; round < 40; round++) {
    // Statements nobody keeps: each becomes garbage as soon as it has run.
    for (let i = 0; i < 50; i++) sqlite.prepare(`SELECT ${round * 50 + i} AS n, ? AS v`).get(i);
    const response = await fetch(address + paths[round % paths.length]);
    if (response.status >= 500) throw new Error(`${paths[round % paths.length]} answered ${response.status}`);
    await response.arrayBuffer();
    collect();
  }
  for (let thread = 0; thread < 12; thread++) {
    await new Promise((resolve, reject) => {
      const worker = new Worker(new URL(import.meta.url), { workerData: databaseUrl });
      worker.once('error', reject);
      worker.once('exit', (code) =>
        code === 0 ? resolve(code) : reject(new Error(`worker exited ${code}`)),
      );
    });
  }
  // Leave a batch for the main thread's teardown too.
  for (let i = 0; i < 200; i++) sqlite.prepare(`SELECT ${i} AS leftover`).get();
  await app.close();
  await deps.close();
  collect();
  console.log('gc-churn: done');
}

async function threadChurn(databaseUrl: string) {
  // The service's file and a scratch database in memory (the old binding failed on either, most
  // often on the one whose statements are cheapest, so the thread leaves the most garbage).
  const file = new SQLite(databaseUrl.slice('sqlite:'.length));
  const scratch = new SQLite(':memory:');
  for (let i = 0; i < 500; i++) file.prepare(`SELECT count(*) + ${i} FROM members`).get();
  for (let i = 0; i < 3000; i++) scratch.prepare(`SELECT ${i} AS n`).get();
  // The database stays open and the statements uncollected: the thread's teardown finalizes them.
}
