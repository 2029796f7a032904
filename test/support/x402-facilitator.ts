// A local x402 facilitator for the payment tests, run as its own process:
//   node test/support/x402-facilitator.ts <port> <chain RPC URL>
// It is @x402/core's x402Facilitator with @x402/evm's exact scheme and the library's own viem signer
// (toFacilitatorEvmSigner), so every payload is verified by the library (EIP-712 signature,
// recipient, amount, validity window, network, a simulation on the chain) and settled for real on
// the local Hardhat chain (test/support/chain.ts), where the test token checks the signature again
// and refuses a used nonce. GET /__settlements lists the transfers it broadcast; POST /__mode makes
// it misbehave on purpose: answer 500, hang, or settle and then hang (the caller never hears back).
import { createServer, type IncomingMessage } from 'node:http';
import { x402Facilitator } from '@x402/core/facilitator';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator';
import { createWalletClient, http, publicActions } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { hardhat } from 'viem/chains';
import { CHAIN_NETWORK, CHAIN_OPERATOR_KEY } from './chain.ts';

type Mode = 'ok' | 'fail500' | 'hang' | 'settle-then-hang';
const modes: { verify: Mode; settle: Mode } = { verify: 'ok', settle: 'ok' };
const settlements: { transaction: string; from: string; to: string; value: string; nonce: string }[] = [];

const wallet = createWalletClient({
  account: privateKeyToAccount(CHAIN_OPERATOR_KEY),
  chain: hardhat,
  transport: http(process.argv[3]),
  pollingInterval: 50,
}).extend(publicActions);
// The library's own adapter over a viem wallet that can also read (its README's recipe); viem's
// generic method types are wider than the adapter's parameter, hence the cast.
const librarySigner = toFacilitatorEvmSigner({
  ...wallet,
  address: wallet.account.address,
} as unknown as Parameters<typeof toFacilitatorEvmSigner>[0]);
const signer: typeof librarySigner = {
  ...librarySigner,
  async writeContract(args) {
    const transaction = await librarySigner.writeContract(args);
    if (args.functionName === 'transferWithAuthorization') {
      const [from, to, value, , , nonce] = args.args as [string, string, bigint, bigint, bigint, string];
      settlements.push({ transaction, from, to, value: String(value), nonce });
    }
    return transaction;
  },
};

const facilitator = new x402Facilitator();
registerExactEvmScheme(facilitator, { signer, networks: CHAIN_NETWORK });

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => resolve(body));
    request.on('error', reject);
  });
}

const hang = () => new Promise<never>(() => {});

const server = createServer(async (request, response) => {
  const send = (status: number, body: unknown) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify(body, (_key, value) => (typeof value === 'bigint' ? value.toString() : value)),
    );
  };
  try {
    const path = new URL(request.url ?? '/', 'http://local').pathname;
    if (request.method === 'GET' && path === '/supported') return send(200, facilitator.getSupported());
    if (request.method === 'GET' && path === '/__settlements') return send(200, { settlements });
    if (request.method === 'POST' && path === '/__mode') {
      Object.assign(modes, JSON.parse(await readBody(request)));
      return send(200, modes);
    }
    if (request.method === 'POST' && (path === '/verify' || path === '/settle')) {
      const { paymentPayload, paymentRequirements } = JSON.parse(await readBody(request)) as {
        paymentPayload: PaymentPayload;
        paymentRequirements: PaymentRequirements;
      };
      const mode = path === '/verify' ? modes.verify : modes.settle;
      if (mode === 'fail500') return send(500, { error: 'facilitator exploded' });
      if (mode === 'hang') return await hang();
      if (path === '/verify') return send(200, await facilitator.verify(paymentPayload, paymentRequirements));
      const result = await facilitator.settle(paymentPayload, paymentRequirements);
      if (mode === 'settle-then-hang') return await hang();
      return send(200, result);
    }
    send(404, { error: 'not found' });
  } catch (error) {
    send(500, { error: (error as Error).message });
  }
});

server.listen(Number(process.argv[2]), '127.0.0.1', () => process.stdout.write('ready\n'));
