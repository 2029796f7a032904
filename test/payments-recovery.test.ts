// x402 donations that lose their answer: the server is killed with kill -9 after the
// facilitator settled the payment and before the donation was recorded; the donation is there
// exactly once after the next start, or after `agent-commons payments reconcile`. On PostgreSQL two
// instances given the same payment payload at once settle and record it once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { freePort } from './support/app.ts';
import { engines, freshDatabase } from './support/databases.ts';
import { killAllChildren, runCli, type ServerProcess, startServer } from './support/processes.ts';
import {
  DONOR,
  payingFetch,
  paymentEnv,
  requirementsOf,
  signedHeader,
  startFacilitator,
  stored,
  type TestFacilitator,
} from './support/x402.ts';

let facilitator: TestFacilitator;
before(async () => {
  facilitator = await startFacilitator();
});
after(async () => {
  await killAllChildren();
  await facilitator?.stop();
});

/** A settle call may take 2 s here, so a claim left behind is reconcilable 5 s after it was made. */
const TIMEOUT_MS = '2000';

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Pays, and kills the server with SIGKILL the moment the facilitator has settled (before its answer). */
async function payAndKillAfterSettlement(server: ServerProcess): Promise<void> {
  const transfersBefore = (await facilitator.settlements()).length;
  await facilitator.setMode({ verify: 'ok', settle: 'settle-then-hang' });
  const paying = payingFetch(DONOR)(`${server.baseUrl}/api/payments/donate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ amount_usd: 12, name: 'Killed Mid-Flight' }),
  }).catch((error: unknown) => error);
  await until('the settlement', async () =>
    (await facilitator.settlements()).length > transfersBefore ? true : undefined,
  );
  await server.kill('SIGKILL');
  assert.ok((await paying) instanceof Error, 'the donor never got an answer');
  await facilitator.setMode({ verify: 'ok', settle: 'ok' });
}

for (const engine of engines) {
  describe(`x402 donations survive kill -9 (${engine.name})`, { skip: engine.skip }, () => {
    test('settled, killed before recording, restarted: the donation is there exactly once', async () => {
      const database = await freshDatabase(engine.name);
      const port = await freePort();
      const env = paymentEnv(facilitator, { X402_FACILITATOR_TIMEOUT_MS: TIMEOUT_MS });
      try {
        const server = await startServer(database.url, { port, args: ['--no-seed'], env });
        await payAndKillAfterSettlement(server);
        const transfers = (await facilitator.settlements()).length;
        const left = await stored(database.url);
        assert.equal(left.donations.length, 0, 'killed before recording');
        assert.deepEqual(
          left.claims.map((claim) => claim.state),
          ['settling'],
        );

        const restarted = await startServer(database.url, { port, args: ['--no-seed'], env });
        const { donations, claims } = await until('the reconciled donation', async () => {
          const now = await stored(database.url);
          return now.donations.length ? now : undefined;
        });
        assert.equal(donations.length, 1);
        assert.equal(donations[0].donor_name, 'Killed Mid-Flight');
        assert.equal(Number(donations[0].amount_cents), 1200);
        assert.equal(donations[0].payer, DONOR.address);
        assert.equal(claims[0].state, 'recorded');
        assert.equal((await facilitator.settlements()).length, transfers, 'settled once, never again');
        const wall = (await (await fetch(`${restarted.baseUrl}/api/payments/donations`)).json()) as Record<
          string,
          any
        >;
        assert.equal(wall.total_usd, 12);
        assert.equal(wall.recent[0].name, 'Killed Mid-Flight');
        // A later pass (or the command) finds nothing more to do.
        const report = await runCli(database.url, ['payments', 'reconcile', '--json'], { env });
        assert.equal(report.code, 0, report.stderr);
        assert.deepEqual(JSON.parse(report.stdout), { recorded: 0, failed: 0, waiting: 0 });
        assert.equal((await stored(database.url)).donations.length, 1);
        await restarted.kill();
      } finally {
        await database.drop();
      }
    });

    test('a settle call that times out answers 503, and the claim it leaves is settled and recorded later', async () => {
      const database = await freshDatabase(engine.name);
      const env = paymentEnv(facilitator, { X402_FACILITATOR_TIMEOUT_MS: TIMEOUT_MS });
      try {
        const server = await startServer(database.url, { port: await freePort(), args: ['--no-seed'], env });
        const transfers = (await facilitator.settlements()).length;
        await facilitator.setMode({ verify: 'ok', settle: 'hang' });
        const required = await requirementsOf(
          await fetch(`${server.baseUrl}/api/payments/donate`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ amount_usd: 8 }),
          }),
        );
        const response = await fetch(`${server.baseUrl}/api/payments/donate`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'payment-signature': await signedHeader(DONOR, required),
          },
          body: JSON.stringify({ amount_usd: 8 }),
        });
        assert.equal(response.status, 503);
        assert.equal(((await response.json()) as { error: string }).error, 'facilitator_unavailable');
        const left = await stored(database.url);
        assert.equal(left.donations.length, 0, 'nothing recorded when the answer is 503');
        assert.deepEqual(
          left.claims.map((claim) => claim.state),
          ['settling'],
        );
        assert.equal(
          (await facilitator.settlements()).length,
          transfers,
          'the hung settle broadcast nothing',
        );
        await facilitator.setMode({ verify: 'ok', settle: 'ok' });
        // The running server's reconciler takes the claim once its lease has run out.
        const { donations } = await until('the reconciled donation', async () => {
          const now = await stored(database.url);
          return now.donations.length ? now : undefined;
        });
        assert.equal(donations.length, 1);
        const broadcast = await facilitator.settlements();
        assert.equal(broadcast.length, transfers + 1, 'settled once, by the reconciler');
        assert.equal(donations[0].transaction_ref, broadcast.at(-1)?.transaction);
        await server.kill();
      } finally {
        await facilitator.setMode({ verify: 'ok', settle: 'ok' });
        await database.drop();
      }
    });

    test('settled, killed, not restarted: agent-commons payments reconcile records it once', async () => {
      const database = await freshDatabase(engine.name);
      const env = paymentEnv(facilitator, { X402_FACILITATOR_TIMEOUT_MS: TIMEOUT_MS });
      try {
        const server = await startServer(database.url, { port: await freePort(), args: ['--no-seed'], env });
        await payAndKillAfterSettlement(server);
        // Inside its lease the claim may still be in flight somewhere: the command leaves it.
        const early = await runCli(database.url, ['payments', 'reconcile', '--json'], { env });
        assert.equal(early.code, 2);
        assert.deepEqual(JSON.parse(early.stdout), { recorded: 0, failed: 0, waiting: 1 });
        await new Promise((resolve) => setTimeout(resolve, 5500));
        const report = await runCli(database.url, ['payments', 'reconcile', '--json'], { env });
        assert.equal(report.code, 0, report.stderr);
        assert.deepEqual(JSON.parse(report.stdout), { recorded: 1, failed: 0, waiting: 0 });
        const { donations, claims } = await stored(database.url);
        assert.equal(donations.length, 1);
        assert.equal(claims[0].state, 'recorded');
      } finally {
        await database.drop();
      }
    });
  });
}

describe('two instances on one PostgreSQL', { skip: engines[1].skip }, () => {
  test('the same payment payload sent to both at once is settled and recorded once', async () => {
    const database = await freshDatabase('postgres');
    const env = paymentEnv(facilitator);
    try {
      const first = await startServer(database.url, { port: await freePort(), args: ['--no-seed'], env });
      const second = await startServer(database.url, { port: await freePort(), args: ['--no-seed'], env });
      const donate = (server: ServerProcess, header?: string) =>
        fetch(`${server.baseUrl}/api/payments/donate`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(header ? { 'payment-signature': header } : {}) },
          body: JSON.stringify({ amount_usd: 6 }),
        });
      const transfers = (await facilitator.settlements()).length;
      for (let round = 0; round < 5; round++) {
        const header = await signedHeader(DONOR, await requirementsOf(await donate(first)));
        const answers = await Promise.all([donate(first, header), donate(second, header)]);
        const statuses = answers.map((answer) => answer.status).sort();
        const bodies = await Promise.all(
          answers.map((answer) => answer.json() as Promise<Record<string, any>>),
        );
        assert.equal(statuses[0], 200, JSON.stringify(bodies));
        // The loser finds the claim (409) or, once the winner settled, the token's used nonce (402).
        assert.ok([402, 409].includes(statuses[1]), JSON.stringify(bodies));
        const { donations, claims } = await stored(database.url);
        assert.equal(donations.length, round + 1);
        assert.equal(claims.length, round + 1);
        assert.equal((await facilitator.settlements()).length, transfers + round + 1);
        // Replayed later to either instance, the payload is refused by the claim both share.
        for (const server of [first, second]) {
          const replay = await donate(server, header);
          assert.equal(replay.status, 409);
          assert.equal(((await replay.json()) as { error: string }).error, 'payment_already_used');
        }
        assert.equal((await stored(database.url)).donations.length, round + 1);
      }
    } finally {
      await database.drop();
    }
  });
});
