// Helpers for the payment tests: a local chain with a test stablecoin (chain.ts), the local facilitator
// process that settles on it (x402-facilitator.ts), a standard x402 client (@x402/fetch with a viem
// account), and payloads signed wrongly on purpose.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { x402Client, x402HTTPClient } from '@x402/core/client';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { type PrivateKeyAccount, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { openDatabase } from '../../src/storage/database.ts';
import { freePort } from './app.ts';
import { startChain, type TestChain } from './chain.ts';
import { type EngineName, freshDatabase, type TestDatabase } from './databases.ts';
import { ROOT, runCliJson, type ServerProcess, startServer } from './processes.ts';

/** Well-known development keys (Hardhat's accounts 1 and 2): never funded anywhere real. */
export const DONOR = privateKeyToAccount(
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
);
export const SECOND_DONOR = privateKeyToAccount(
  '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
);
export const PAY_TO = '0x90F79bf6EB2c4f870365E785982E1f101E93b906';

export type FacilitatorMode = 'ok' | 'fail500' | 'hang' | 'settle-then-hang';

export interface TestFacilitator {
  url: string;
  /** The chain it settles on, with the token donations are paid in. */
  chain: TestChain;
  setMode(modes: { verify?: FacilitatorMode; settle?: FacilitatorMode }): Promise<void>;
  /** The transfers it broadcast, in order. */
  settlements(): Promise<{ transaction: string; from: string; to: string; value: string; nonce: string }[]>;
  stop(): Promise<void>;
}

/** The chain (the donors funded), then the facilitator process settling on it. */
export async function startFacilitator(): Promise<TestFacilitator> {
  const chain = await startChain([DONOR.address, SECOND_DONOR.address]);
  const port = await freePort();
  const child: ChildProcess = spawn(
    process.execPath,
    ['test/support/x402-facilitator.ts', String(port), chain.rpcUrl],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } },
  );
  let errors = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    errors += chunk;
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      if (chunk.includes('ready')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the test facilitator exited (${code}): ${errors}`)));
  }).catch(async (error) => {
    await chain.stop();
    throw error;
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    chain,
    async setMode(modes) {
      const response = await fetch(`${url}/__mode`, { method: 'POST', body: JSON.stringify(modes) });
      if (response.status !== 200) throw new Error(`mode: ${response.status}`);
    },
    async settlements() {
      const response = await fetch(`${url}/__settlements`);
      return ((await response.json()) as { settlements: Awaited<ReturnType<TestFacilitator['settlements']>> })
        .settlements;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exited;
      }
      await chain.stop();
    },
  };
}

/** The x402 client an agent would use; spend controls off (the test token is not a default asset's cap). */
export function x402ClientFor(account: PrivateKeyAccount) {
  return x402Client.fromConfig({
    schemes: [{ network: 'eip155:*', client: new ExactEvmScheme(account) }],
    spendControls: false,
  });
}

/** `fetch` that answers a 402 by paying, as @x402/fetch does for any agent. */
export function payingFetch(account: PrivateKeyAccount) {
  return wrapFetchWithPayment(fetch, x402ClientFor(account));
}

/** The 402's payment requirements, as a standard client reads them. */
export async function requirementsOf(response: Response): Promise<PaymentRequired> {
  const body = await response.json();
  return new x402HTTPClient(x402ClientFor(DONOR)).getPaymentRequiredResponse(
    (name) => response.headers.get(name),
    body,
  );
}

/** A payment signed by the standard client over `required` (possibly tampered with): its header value. */
export async function signedHeader(account: PrivateKeyAccount, required: PaymentRequired): Promise<string> {
  const client = x402ClientFor(account);
  const payload = await client.createPaymentPayload(required);
  return encode(payload);
}

export function encode(payload: PaymentPayload): string {
  return new x402HTTPClient(x402ClientFor(DONOR)).encodePaymentSignatureHeader(payload)['PAYMENT-SIGNATURE'];
}

export function decode(header: string): PaymentPayload {
  return JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as PaymentPayload;
}

const AUTHORIZATION_TYPES = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

/**
 * An EIP-3009 authorization signed correctly but already expired: the standard client never makes
 * one, so it is signed here the way the token verifies it.
 */
export async function expiredHeader(account: PrivateKeyAccount, required: PaymentRequired): Promise<string> {
  const accepted = required.accepts[0];
  const now = Math.floor(Date.now() / 1000);
  const authorization = {
    from: account.address,
    to: accepted.payTo as `0x${string}`,
    value: accepted.amount,
    validAfter: String(now - 600),
    validBefore: String(now - 60),
    nonce: toHex(randomBytes(32)),
  };
  const signature = await account.signTypedData({
    domain: {
      name: accepted.extra.name as string,
      version: accepted.extra.version as string,
      chainId: Number(accepted.network.split(':')[1]),
      verifyingContract: accepted.asset as `0x${string}`,
    },
    types: AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization',
    message: {
      ...authorization,
      value: BigInt(authorization.value),
      validAfter: BigInt(authorization.validAfter),
      validBefore: BigInt(authorization.validBefore),
    },
  });
  return encode({
    x402Version: 2,
    resource: required.resource,
    accepted,
    payload: { authorization, signature },
  });
}

/** A valid payment whose signature has one byte changed. */
export function withBadSignature(header: string): string {
  const payload = decode(header);
  const inner = payload.payload as { signature: string };
  const last = inner.signature.slice(-4, -2);
  const flipped = (Number.parseInt(last, 16) ^ 0x01).toString(16).padStart(2, '0');
  inner.signature = `${inner.signature.slice(0, -4)}${flipped}${inner.signature.slice(-2)}`;
  return encode(payload);
}

/** The server's settings: this facilitator, its chain and token, and our payee. */
export function paymentEnv(
  facilitator: TestFacilitator,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    X402_FACILITATOR_URL: facilitator.url,
    X402_NETWORK: facilitator.chain.network,
    X402_ASSET: facilitator.chain.asset,
    X402_ASSET_NAME: 'USDC',
    X402_ASSET_VERSION: '2',
    X402_PAY_TO: PAY_TO,
    X402_FACILITATOR_TIMEOUT_MS: '1500',
    ...extra,
  };
}

/** What the payment tables hold, read straight from the database. */
export async function stored(url: string) {
  const database = openDatabase(url);
  try {
    const donations = await database.db
      .selectFrom('donations')
      .select([
        'id',
        'donor_name',
        'amount_cents',
        'message',
        'public',
        'member_id',
        'transaction_ref',
        'payment_key',
        'payer',
      ])
      .where('source', '=', 'x402')
      .orderBy('created_at')
      .execute();
    const claims = await database.db.selectFrom('payment_settlements').selectAll().execute();
    return { donations, claims };
  } finally {
    await database.close();
  }
}

/** POST /api/payments/donate as a plain client sends it. */
export function donateRequest(server: ServerProcess, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${server.baseUrl}/api/payments/donate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
}

export interface PaymentServer {
  database: TestDatabase;
  server: ServerProcess;
  member: { id: string; name: string };
  /** A bearer of that member, and a sandbox one. */
  token: string;
  sandboxToken: string;
}

/** A fresh database with one member ("Pat Payer") and the real server taking payments through `facilitator`. */
export async function startPaymentServer(
  engine: EngineName,
  facilitator: TestFacilitator,
): Promise<PaymentServer> {
  const database = await freshDatabase(engine);
  const member = await runCliJson(database.url, [
    'member',
    'create',
    '--email',
    `payer-${engine}@test.example`,
    '--name',
    'Pat Payer',
    '--tier',
    'member',
  ]);
  const mint = (...extra: string[]) =>
    runCliJson(database.url, [
      'token',
      'mint',
      '--member',
      member.id,
      '--scopes',
      'membership:read',
      ...extra,
    ]);
  const token = (await mint()).token;
  const sandboxToken = (await mint('--sandbox')).token;
  const server = await startServer(database.url, {
    port: await freePort(),
    args: ['--no-seed'],
    env: paymentEnv(facilitator),
  });
  return { database, server, member, token, sandboxToken };
}
