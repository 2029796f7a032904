// x402 donations: every refusal, checked on the wire and in storage (no donation, no
// claim left, nothing broadcast by the facilitator), on SQLite and PostgreSQL. The flow that
// succeeds is in payments.test.ts, lost answers in payments-recovery.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { engines, type TestDatabase } from './support/databases.ts';
import { killAllChildren, type ServerProcess } from './support/processes.ts';
import {
  DONOR,
  expiredHeader,
  donateRequest as post,
  requirementsOf,
  signedHeader,
  startFacilitator,
  startPaymentServer,
  stored,
  type TestFacilitator,
  withBadSignature,
} from './support/x402.ts';

let facilitator: TestFacilitator;
before(async () => {
  facilitator = await startFacilitator();
});
after(async () => {
  await killAllChildren();
  await facilitator?.stop();
});

for (const engine of engines) {
  describe(`x402 donations refused (${engine.name})`, { skip: engine.skip }, () => {
    let database: TestDatabase;
    let server: ServerProcess;
    let sandboxToken: string;

    before(async () => {
      await facilitator.setMode({ verify: 'ok', settle: 'ok' });
      ({ database, server, sandboxToken } = await startPaymentServer(engine.name, facilitator));
    });
    after(async () => {
      await server?.kill();
      await database?.drop();
    });

    /** Asserts a refused attempt changed nothing: no donation, no claim, no transfer broadcast. */
    async function nothingRecorded(
      before: Awaited<ReturnType<typeof stored>>,
      transfers: number,
      what: string,
    ) {
      const now = await stored(database.url);
      assert.equal(now.donations.length, before.donations.length, `${what}: no donation`);
      assert.equal(now.claims.length, before.claims.length, `${what}: no claim left`);
      assert.equal((await facilitator.settlements()).length, transfers, `${what}: nothing broadcast`);
    }

    test('refusals answer on the wire and record nothing', async (t) => {
      const bare = await post(server, { amount_usd: 5 });
      const required = await requirementsOf(bare);
      const before = await stored(database.url);
      const transfers = (await facilitator.settlements()).length;
      const tamper = (change: (accepted: Record<string, any>) => void) => {
        const copy = structuredClone(required);
        change(copy.accepts[0] as Record<string, any>);
        return signedHeader(DONOR, copy);
      };
      const cases: {
        name: string;
        header: () => Promise<string>;
        status: number;
        error: RegExp;
        auth?: string;
      }[] = [
        {
          name: 'underpayment',
          header: () =>
            tamper((a) => {
              a.amount = '1000000';
            }),
          status: 402,
          error: /^no_matching_payment_requirements$/,
        },
        {
          name: 'wrong network',
          header: () =>
            tamper((a) => {
              a.network = 'eip155:8453';
            }),
          status: 402,
          error: /^no_matching_payment_requirements$/,
        },
        {
          name: 'wrong asset',
          header: () =>
            tamper((a) => {
              a.asset = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
            }),
          status: 402,
          error: /^no_matching_payment_requirements$/,
        },
        {
          name: 'wrong payTo',
          header: () =>
            tamper((a) => {
              a.payTo = DONOR.address;
            }),
          status: 402,
          error: /^no_matching_payment_requirements$/,
        },
        {
          name: 'expired authorization',
          header: () => expiredHeader(DONOR, required),
          status: 402,
          error: /valid_before/,
        },
        {
          name: 'bad signature',
          header: async () => withBadSignature(await signedHeader(DONOR, required)),
          status: 402,
          error: /signature/,
        },
        {
          name: 'sandbox token',
          header: () => signedHeader(DONOR, required),
          status: 403,
          error: /^sandbox_denied$/,
          auth: sandboxToken,
        },
      ];
      for (const refusal of cases) {
        const response = await post(
          server,
          { amount_usd: 5 },
          {
            'payment-signature': await refusal.header(),
            ...(refusal.auth ? { authorization: `Bearer ${refusal.auth}` } : {}),
          },
        );
        const body = (await response.json()) as Record<string, any>;
        t.diagnostic(`${refusal.name}: ${response.status} ${body.error}`);
        assert.equal(response.status, refusal.status, refusal.name);
        assert.match(body.error, refusal.error, refusal.name);
        if (refusal.status === 402) {
          assert.equal(body.error_kind, 'payment_required', refusal.name);
          assert.ok(response.headers.get('payment-required'), `${refusal.name}: PAYMENT-REQUIRED`);
        }
        await nothingRecorded(before, transfers, refusal.name);
      }
      const small = await post(server, { amount_usd: 0.5 });
      assert.equal(small.status, 400);
      assert.match(((await small.json()) as { message: string }).message, /at least 1/);
    });

    test('a payment payload is never settled or recorded twice; an Idempotency-Key replays the answer', async () => {
      const required = await requirementsOf(await post(server, { amount_usd: 3 }));
      const header = await signedHeader(DONOR, required);
      const key = `idem-${engine.name}`;
      const first = await post(
        server,
        { amount_usd: 3 },
        { 'payment-signature': header, 'idempotency-key': key },
      );
      assert.equal(first.status, 200);
      const firstBody = await first.json();
      const again = await post(
        server,
        { amount_usd: 3 },
        { 'payment-signature': header, 'idempotency-key': key },
      );
      assert.equal(again.status, 200);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(await again.json(), firstBody);
      const before = await stored(database.url);
      const transfers = (await facilitator.settlements()).length;
      const replay = await post(server, { amount_usd: 3 }, { 'payment-signature': header });
      assert.equal(replay.status, 409);
      assert.equal(((await replay.json()) as { error: string }).error, 'payment_already_used');
      await nothingRecorded(before, transfers, 'replay');
      assert.equal(before.donations.filter((d) => d.amount_cents === 300).length, 1);
    });

    test('a facilitator that answers 500 or never answers: 502/503 in the Error shape, nothing recorded', async () => {
      const required = await requirementsOf(await post(server, { amount_usd: 4 }));
      const before = await stored(database.url);
      const transfers = (await facilitator.settlements()).length;
      const attempts: [string, { verify?: 'fail500' | 'hang'; settle?: 'fail500' }, number, string][] = [
        ['verify answers 500', { verify: 'fail500' }, 502, 'facilitator_error'],
        ['verify times out', { verify: 'hang' }, 503, 'facilitator_unavailable'],
        ['settle answers 500', { settle: 'fail500' }, 502, 'facilitator_error'],
      ];
      try {
        for (const [name, mode, status, error] of attempts) {
          await facilitator.setMode({ verify: 'ok', settle: 'ok', ...mode });
          const response = await post(
            server,
            { amount_usd: 4 },
            { 'payment-signature': await signedHeader(DONOR, required) },
          );
          const body = (await response.json()) as Record<string, any>;
          assert.equal(response.status, status, name);
          assert.equal(body.error, error, name);
          assert.ok(body.request_id, name);
          await nothingRecorded(before, transfers, name);
        }
      } finally {
        await facilitator.setMode({ verify: 'ok', settle: 'ok' });
      }
    });
  });
}
