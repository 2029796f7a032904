// A local EVM chain for the payment tests: Hardhat's network (`hardhat node`, from npm, no download)
// with a test EIP-3009 stablecoin (chain/TestUsdc.sol, compiled here with solc-js) deployed and the
// donors funded. The x402 test facilitator settles on it for real.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import solc from 'solc';
import { type Abi, createWalletClient, http, publicActions } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { hardhat } from 'viem/chains';
import { freePort } from './app.ts';

const CHAIN_DIR = fileURLToPath(new URL('./chain/', import.meta.url));
const HARDHAT = fileURLToPath(new URL('../../node_modules/hardhat/dist/src/cli.js', import.meta.url));

/** Hardhat's development account 0: deploys the token and pays the facilitator's gas. */
export const CHAIN_OPERATOR_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
export const CHAIN_NETWORK = 'eip155:31337';

export interface TestChain {
  rpcUrl: string;
  network: string;
  /** The deployed test stablecoin (EIP-712 domain `USDC`, version `2`, 6 decimals). */
  asset: `0x${string}`;
  abi: Abi;
  balanceOf(address: string): Promise<bigint>;
  stop(): Promise<void>;
}

function compileToken(): { abi: Abi; bytecode: `0x${string}` } {
  const input = {
    language: 'Solidity',
    sources: { 'TestUsdc.sol': { content: readFileSync(`${CHAIN_DIR}TestUsdc.sol`, 'utf8') } },
    settings: { outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input)));
  const failures = (output.errors ?? []).filter((error: { severity: string }) => error.severity === 'error');
  if (failures.length) throw new Error(`TestUsdc.sol: ${JSON.stringify(failures)}`);
  const contract = output.contracts['TestUsdc.sol'].TestUsdc;
  return { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` };
}

/** Starts `hardhat node`, deploys the token and mints `fund` to each of `donors`. */
export async function startChain(donors: string[], fund = 1_000_000_000n): Promise<TestChain> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    process.execPath,
    [HARDHAT, 'node', '--hostname', '127.0.0.1', '--port', String(port)],
    {
      cwd: CHAIN_DIR,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_OPTIONS: '', HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true', DO_NOT_TRACK: '1' },
    },
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Started HTTP')) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`hardhat node exited (${code}): ${output}`)));
  });
  const rpcUrl = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  };
  try {
    const { abi, bytecode } = compileToken();
    const wallet = createWalletClient({
      account: privateKeyToAccount(CHAIN_OPERATOR_KEY),
      chain: hardhat,
      transport: http(rpcUrl),
      pollingInterval: 50,
    }).extend(publicActions);
    const deployed = await wallet.waitForTransactionReceipt({
      hash: await wallet.deployContract({ abi, bytecode }),
    });
    const asset = deployed.contractAddress as `0x${string}`;
    for (const donor of donors) {
      const hash = await wallet.writeContract({
        address: asset,
        abi,
        functionName: 'mint',
        args: [donor, fund],
      });
      await wallet.waitForTransactionReceipt({ hash });
    }
    const balanceOf = async (address: string) =>
      (await wallet.readContract({
        address: asset,
        abi,
        functionName: 'balanceOf',
        args: [address],
      })) as bigint;
    return { rpcUrl, network: CHAIN_NETWORK, asset, abi, balanceOf, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
