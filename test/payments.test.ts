// x402 donations against a real server process and a local facilitator process built from
// @x402/core + @x402/evm (test/support/x402-facilitator.ts: signatures verified for real, the transfer
// recorded instead of broadcast). A standard x402 client (@x402/fetch with a viem account) pays;
// the donor wall, the member's event log and MCP show the donation, on SQLite and PostgreSQL.
// Refusals: payments-refusals.test.ts; lost answers: payments-recovery.test.ts.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import { systemClock } from '../src/clock.ts';
import { loadConfig } from '../src/config.ts';
import { createSession, SESSION_COOKIE } from '../src/domain/auth/sessions.ts';
import { openDatabase } from '../src/storage/database.ts';
import { closedPort, startTestApp } from './support/app.ts';
import { engines, freshDatabase, type TestDatabase } from './support/databases.ts';
import { killAllChildren, type ServerProcess, startServer } from './support/processes.ts';
import {
  DONOR,
  donateRequest,
  PAY_TO,
  payingFetch,
  SECOND_DONOR,
  startFacilitator,
  startPaymentServer,
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

const post = donateRequest;

for (const engine of engines) {
  describe(`x402 donations (${engine.name})`, { skip: engine.skip }, () => {
    let database: TestDatabase;
    let server: ServerProcess;
    let member: { id: string; name: string };
    let token: string;

    before(async () => {
      await facilitator.setMode({ verify: 'ok', settle: 'ok' });
      ({ database, server, member, token } = await startPaymentServer(engine.name, facilitator));
    });
    after(async () => {
      await server?.kill();
      await database?.drop();
    });

    test('a bare request answers 402 with the payment requirements; the boot line and setup-check say payments are on', async () => {
      assert.match(
        server.stdout(),
        /payments: x402 donations to 0x90F7.* on eip155:31337, settled through http:\/\/127\.0\.0\.1/,
      );
      const response = await post(server, { amount_usd: 5 });
      assert.equal(response.status, 402);
      const required = decodePaymentRequiredHeader(response.headers.get('payment-required') ?? '');
      assert.equal(required.x402Version, 2);
      assert.equal(required.resource.url, `${server.baseUrl}/api/payments/donate`);
      assert.match(required.resource.description ?? '', /donation/);
      assert.equal(required.accepts.length, 1);
      const [accepted] = required.accepts;
      assert.equal(accepted.scheme, 'exact');
      assert.equal(accepted.network, 'eip155:31337');
      assert.equal(accepted.asset, facilitator.chain.asset);
      assert.deepEqual(accepted.extra, { name: 'USDC', version: '2' });
      assert.equal(accepted.amount, '5000000');
      assert.equal(accepted.payTo, PAY_TO);
      assert.equal(accepted.maxTimeoutSeconds, 300);
      const body = (await response.json()) as Record<string, any>;
      assert.equal(body.error, 'payment_required');
      assert.equal(body.error_kind, 'payment_required');
      assert.deepEqual(body.accepts, required.accepts);
      const check = (await (await fetch(`${server.baseUrl}/api/agent/setup-check`)).json()) as Record<
        string,
        any
      >;
      assert.equal(check.checks.payments.accepting, true);
      assert.equal(check.checks.payments.network, 'eip155:31337');
      const discovery = (await (await fetch(`${server.baseUrl}/discovery/resources`)).json()) as Record<
        string,
        any
      >;
      assert.equal(discovery.x402Version, 2);
      assert.equal(discovery.items[0].resource, `${server.baseUrl}/api/payments/donate`);
      assert.equal(discovery.items[0].accepts[0].payTo, PAY_TO);
      assert.equal((await stored(database.url)).claims.length, 0);
    });

    test('a standard x402 client pays end to end; the donor wall, the member and the event log show it', async () => {
      const payeeBefore = await facilitator.chain.balanceOf(PAY_TO);
      const donorBefore = await facilitator.chain.balanceOf(DONOR.address);
      const pay = payingFetch(DONOR);
      const response = await pay(`${server.baseUrl}/api/payments/donate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ amount_usd: 7.5, message: 'For the\u200b printer \u001b[31mfilament' }),
      });
      assert.equal(response.status, 200);
      const receipt = decodePaymentResponseHeader(response.headers.get('payment-response') ?? '');
      assert.equal(receipt.success, true);
      assert.equal(receipt.network, 'eip155:31337');
      assert.equal(receipt.payer, DONOR.address);
      const body = (await response.json()) as Record<string, any>;
      assert.equal(body.donation.amount_usd, 7.5);
      assert.equal(body.donation.name, 'Pat Payer');
      assert.equal(body.donation.message, 'For the printer filament');
      assert.equal(body.donation.member_id, member.id);
      assert.equal(body.donation.transaction, receipt.transaction);
      const transfers = await facilitator.settlements();
      assert.equal(transfers.at(-1)?.transaction, receipt.transaction);
      assert.equal(transfers.at(-1)?.to, PAY_TO);
      assert.equal(transfers.at(-1)?.value, '7500000');
      // Settled on the chain: the token moved.
      assert.equal(await facilitator.chain.balanceOf(PAY_TO), payeeBefore + 7_500_000n);
      assert.equal(await facilitator.chain.balanceOf(DONOR.address), donorBefore - 7_500_000n);
      const { donations, claims } = await stored(database.url);
      assert.equal(donations.length, 1);
      assert.equal(donations[0].transaction_ref, receipt.transaction);
      assert.equal(donations[0].member_id, member.id);
      assert.equal(donations[0].payer, DONOR.address);
      assert.equal(claims[0].state, 'recorded');
      const wall = (await (await fetch(`${server.baseUrl}/api/payments/donations`)).json()) as Record<
        string,
        any
      >;
      assert.equal(wall.total_usd, 7.5);
      assert.deepEqual(wall.recent[0], {
        name: 'Pat Payer',
        amount_usd: 7.5,
        message: 'For the printer filament',
        at: body.donation.at,
      });
      const events = await (async () => {
        const db = openDatabase(database.url);
        try {
          return await db.db
            .selectFrom('event_log')
            .selectAll()
            .where('recipient_id', '=', member.id)
            .where('type', '=', 'donation_received')
            .execute();
        } finally {
          await db.close();
        }
      })();
      assert.equal(events.length, 1);
      assert.equal(JSON.parse(events[0].payload).amount_usd, 7.5);
    });

    test('MCP says how to pay and its donor wall has the donation at once', async () => {
      const client = new Client({ name: 'agent-commons-tests', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${server.baseUrl}/api/mcp`)));
      try {
        const call = async (name: string) =>
          (await client.callTool({ name, arguments: {} })).structuredContent as Record<string, any>;
        const donate = await call('ic_donate');
        assert.equal(donate.payments_accepted, true);
        assert.equal(donate.pay_with_x402.resource, `${server.baseUrl}/api/payments/donate`);
        assert.equal(donate.pay_with_x402.payment_header, 'PAYMENT-SIGNATURE');
        assert.equal(donate.pay_with_x402.status.network, 'eip155:31337');
        const wall = await call('ic_donations_total');
        assert.equal(wall.total_usd, 7.5);
        assert.equal(wall.recent[0].name, 'Pat Payer');
      } finally {
        await client.close();
      }
    });

    test('an anonymous donation counts toward the total and is never shown', async () => {
      const response = await payingFetch(SECOND_DONOR)(`${server.baseUrl}/api/payments/donate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ amount_usd: 2, name: 'Should not show', anonymous: true }),
      });
      assert.equal(response.status, 200);
      const body = (await response.json()) as Record<string, any>;
      assert.equal(body.donation.shown_on_wall, false);
      assert.equal(body.donation.member_id, null);
      const wall = (await (await fetch(`${server.baseUrl}/api/payments/donations`)).json()) as Record<
        string,
        any
      >;
      assert.equal(wall.total_usd, 9.5);
      assert.ok(!JSON.stringify(wall).includes('Should not show'));
    });

    test('a browser session attributes the donation to its member, under the name they chose', async () => {
      const db = openDatabase(database.url);
      let session: string;
      try {
        session = await createSession(db.db, systemClock, member.id);
      } finally {
        await db.close();
      }
      const response = await payingFetch(SECOND_DONOR)(`${server.baseUrl}/api/payments/donate`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          cookie: `${SESSION_COOKIE}=${session}`,
          origin: server.baseUrl,
        },
        body: JSON.stringify({ amount_usd: 1, name: 'P. Payer' }),
      });
      assert.equal(response.status, 200);
      const body = (await response.json()) as Record<string, any>;
      assert.equal(body.donation.member_id, member.id);
      assert.equal(body.donation.name, 'P. Payer');
      const { donations } = await stored(database.url);
      assert.equal(donations.at(-1)?.member_id, member.id);
    });
  });
}

describe('x402 donations while no payee is configured', () => {
  test('the payable resource is 404, nothing is offered, and setup-check says why', async () => {
    const app = await startTestApp();
    try {
      const response = await fetch(`${app.baseUrl}/api/payments/donate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ amount_usd: 5 }),
      });
      assert.equal(response.status, 404);
      const body = (await response.json()) as Record<string, any>;
      assert.equal(body.error, 'payments_not_configured');
      assert.match(body.message, /X402_PAY_TO/);
      assert.equal(response.headers.get('payment-required'), null);
      const discovery = (await (await fetch(`${app.baseUrl}/discovery/resources`)).json()) as Record<
        string,
        any
      >;
      assert.deepEqual(discovery.items, []);
      const check = (await (await fetch(`${app.baseUrl}/api/agent/setup-check`)).json()) as Record<
        string,
        any
      >;
      assert.equal(check.checks.payments.accepting, false);
      assert.match(check.checks.payments.reason, /X402_PAY_TO/);
    } finally {
      await app.close();
    }
  });

  test('the boot line says payments are off and why', async () => {
    const database = await freshDatabase('sqlite');
    try {
      const server = await startServer(database.url, { args: ['--no-seed'] });
      assert.match(server.stdout(), /^payments: off \(X402_PAY_TO is not set/m);
      await server.kill();
    } finally {
      await database.drop();
    }
  });
});

describe('x402 while the facilitator could never be reached', () => {
  test('discovery and a donation answer 503 facilitator_unavailable with Retry-After, and nothing is stored', async () => {
    const down = `http://127.0.0.1:${await closedPort()}`;
    const payments = loadConfig({ X402_PAY_TO: PAY_TO, X402_FACILITATOR_URL: down }).payments;
    const app = await startTestApp({ config: { payments } });
    try {
      const response = await fetch(`${app.baseUrl}/discovery/resources`);
      assert.equal(response.status, 503);
      assert.equal(response.headers.get('retry-after'), '2');
      const body = (await response.json()) as Record<string, any>;
      assert.equal(body.error, 'facilitator_unavailable');
      assert.equal(body.error_kind, 'unavailable');
      assert.match(body.message, /facilitator cannot be reached/);
      assert.equal(typeof body.request_id, 'string');
      // The payment server is built at the first donation as well: the same refusal, not a 500.
      const donation = await fetch(`${app.baseUrl}/api/payments/donate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ amount_usd: 5 }),
      });
      assert.equal(donation.status, 503);
      assert.equal(donation.headers.get('retry-after'), '2');
      assert.equal(((await donation.json()) as Record<string, any>).error, 'facilitator_unavailable');
      const { donations, claims } = await stored(app.database.url);
      assert.deepEqual([donations.length, claims.length], [0, 0]);
    } finally {
      await app.close();
    }
  });
});

describe('x402 while the facilitator answers nonsense', () => {
  test('discovery and a donation answer 502 facilitator_error, without Retry-After, and nothing is stored', async () => {
    // A facilitator that answers, but not with x402's /supported shape: broken, not away.
    const broken = createServer((request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ asked: request.url, kinds: 'none' }));
    });
    await new Promise<void>((resolve) => broken.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(broken.address() as AddressInfo).port}`;
    const payments = loadConfig({ X402_PAY_TO: PAY_TO, X402_FACILITATOR_URL: url }).payments;
    const app = await startTestApp({ config: { payments } });
    try {
      const response = await fetch(`${app.baseUrl}/discovery/resources`);
      assert.equal(response.status, 502);
      assert.equal(response.headers.get('retry-after'), null);
      const body = (await response.json()) as Record<string, any>;
      assert.equal(body.error, 'facilitator_error');
      assert.equal(body.error_kind, 'upstream');
      assert.match(body.message, /requirements cannot be listed now/);
      assert.equal(typeof body.request_id, 'string');
      const donation = await fetch(`${app.baseUrl}/api/payments/donate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ amount_usd: 5 }),
      });
      assert.equal(donation.status, 502);
      assert.equal(((await donation.json()) as Record<string, any>).error, 'facilitator_error');
      const { donations, claims } = await stored(app.database.url);
      assert.deepEqual([donations.length, claims.length], [0, 0]);
    } finally {
      await app.close();
      broken.close();
    }
  });
});
