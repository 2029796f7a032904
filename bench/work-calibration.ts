// What a request's own work costs a server on this machine, apart from any code of ours: node:http
// sends setup-check's answer (as the setup-check floor) after N µs of busy work, N = 0, 10, 20, 40, in interleaved
// rounds beside node:http hello. On a machine where node:http alone is near its hello, the row whose
// ratio first falls under 75 % says how much work per request the bearer read's target leaves for everything a
// real request does: authenticate, count, build and send the answer.
// Usage: node bench/work-calibration.ts   (BENCH_ROUNDS, BENCH_SECONDS)
import { type Figures, load, pinLoadGenerator, report, startProcess } from './support.ts';

const WORK_MICROS = [0, 10, 20, 40];
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
pinLoadGenerator();
const hello = await startProcess(['bench/hello-server.mjs'], {}, '/');
const rows: Figures[] = [];
try {
  for (let round = 1; round <= rounds; round++) {
    rows.push(await load(`${round}: node:http hello`, { url: `${hello.url}/` }, hello.child.pid));
    for (const micros of WORK_MICROS)
      rows.push(
        await load(
          `${round}: node:http floor, setup-check reply after ${micros} µs of work`,
          { url: `${hello.url}/setup-check?work=${micros}` },
          hello.child.pid,
        ),
      );
  }
} finally {
  await hello.stop();
}
report(
  rows,
  rows.filter((row) => row.name.endsWith('node:http hello')),
);
