import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { engines } from './support/databases.ts';
import { fuzzEngine, targets } from './support/fuzz.ts';

// Generated bad input for every registry operation on REST, MCP and A2A (test/support/fuzz.ts):
// no 5xx, no internal error in an MCP or A2A reply, no log line at error level. A short pass here,
// a new seed each run (FUZZ_SEED fixes it); `npm run fuzz` runs the long one. On a failure
// fast-check prints the seed and the path of the shrunk input: FUZZ_SEED=<seed> FUZZ_PATH=<path>
// with this file (or npm run fuzz) replays it.

const RUNS = Number(process.env.FUZZ_TEST_RUNS ?? 5000);
const SECONDS = Number(process.env.FUZZ_TEST_SECONDS ?? 25);
const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);

test('every operation is fuzzed on each surface it is served on', () => {
  const pairs = targets().map(({ op, surface }) => `${surface} ${op.id}`);
  assert.ok(pairs.includes('rest getNextEvents'));
  assert.ok(pairs.includes('mcp adminResolveFeedback'));
  assert.ok(pairs.includes('a2a signalGetIssue'));
  assert.ok(!pairs.includes('mcp getMyTier'), 'REST-only operations have no tool');
});

for (const engine of engines) {
  describe(`fuzz: generated bad input on every surface (${engine.name})`, { skip: engine.skip }, () => {
    test(`up to ${RUNS} calls or ${SECONDS} s, seed ${seed}`, {
      timeout: (SECONDS + 90) * 1000,
    }, async (t) => {
      const report = await fuzzEngine(engine.name, {
        runs: RUNS,
        seed,
        path: process.env.FUZZ_PATH,
        timeLimitMs: SECONDS * 1000,
        mode: 'assert',
      });
      const { setup, calls, close } = report.phases;
      t.diagnostic(`${report.tried} calls; setup ${setup} s, calls ${calls} s, close ${close} s`);
      assert.deepEqual(report.failures, [], `${report.failed} failed; seed ${seed}`);
      // The pass must have reached the handlers, not only the gates in front of them.
      assert.ok(report.tried >= Math.min(RUNS, 200), `only ${report.tried} calls in ${report.seconds} s`);
      assert.ok((report.outcomes.success ?? 0) > report.tried / 20, JSON.stringify(report.outcomes));
    });
  });
}
