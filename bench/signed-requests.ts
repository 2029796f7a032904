// The signed-request rows, BENCH_ONLY=signed: GET /api/agent/setup-check signed (RFC 9421, Ed25519,
// a fresh nonce per request, and with none) beside the same call with the bearer only and beside its floor, the
// bearer call plus one bare Ed25519 verification (bench/signed-floor.mjs), on one server, in
// interleaved rounds (BENCH_SIGNED_ROUNDS, 3 by default).
import { generateKeyPairSync, type KeyObject, randomUUID, sign } from 'node:crypto';
import type autocannon from 'autocannon';
import { systemClock } from '../src/clock.ts';
import { bindSigningKey, setSigningEnforcement } from '../src/domain/auth/signing-keys.ts';
import { openDatabase } from '../src/storage/database.ts';
import { WriteBatcher } from '../src/storage/engine/write-batcher.ts';
import {
  interleavedRounds,
  mintBenchToken,
  type RoundMedians,
  type RoundSide,
  type Server,
} from './support.ts';

export interface SignedTokens {
  bearer: string;
  signed: string;
  privateKey: KeyObject;
  keyId: string;
}

/** Two tokens: one used with the bearer alone, one with a bound key and enforcement on. */
export async function prepareSignedTokens(env: Record<string, string>): Promise<SignedTokens> {
  const bearer = mintBenchToken(env, 'bearer-only', 'read:public');
  const signer = mintBenchToken(env, 'signed', 'read:public');
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const { x } = publicKey.export({ format: 'jwk' }) as { x: string };
  const database = openDatabase(env.DATABASE_URL);
  try {
    const port = { db: database.db, writes: new WriteBatcher(database), clock: systemClock };
    const [{ id }] = await database.db
      .selectFrom('tokens')
      .select('id')
      .where('member_id', '=', signer.memberId)
      .execute();
    const bound = await bindSigningKey(
      port,
      signer.memberId,
      id,
      { kty: 'OKP', crv: 'Ed25519', x },
      { kind: 'bench' },
    );
    await setSigningEnforcement(port, signer.memberId, id, true, { kind: 'bench' });
    return { bearer: bearer.token, signed: signer.token, privateKey, keyId: bound.keyId as string };
  } finally {
    await database.close();
  }
}

/** The header bench/signed-floor.mjs answers with one bare Ed25519 verification. */
export const FLOOR_HEADER = 'x-bench-verify';
/** The service's start when the signed rows run: with the signed request's floor loaded into its process. */
export const SIGNED_FLOOR_SERVE = [
  '--import',
  './bench/signed-floor.mjs',
  'bin/agent-commons.js',
  'serve',
  '--no-seed',
];

/**
 * The headers of one signed GET, as an agent would compute them: a fresh created and nonce each
 * time. The base is written out here rather than built by the library, so the load generator spends
 * little more than the signing on each request; the server checks it before the load (expectReady).
 */
export function signedHeaders(url: string, tokens: SignedTokens, nonce = true): Record<string, string> {
  const created = Math.floor(Date.now() / 1000);
  const params = `("@method" "@authority" "@target-uri");created=${created};keyid="${tokens.keyId}";alg="ed25519"${nonce ? `;nonce="${randomUUID()}"` : ''}`;
  const { host } = new URL(url);
  const base = `"@method": GET\n"@authority": ${host}\n"@target-uri": ${url}\n"@signature-params": ${params}`;
  const signature = sign(null, Buffer.from(base), tokens.privateKey).toString('base64');
  return {
    authorization: `Bearer ${tokens.signed}`,
    'signature-input': `sig1=${params}`,
    signature: `sig1=:${signature}:`,
  };
}

/** The signed request for autocannon: `url` is the setup-check's as signed, signed afresh for every request. */
export function signedSetupCheck(url: string, tokens: SignedTokens, nonce = true): autocannon.Request {
  return {
    method: 'GET',
    path: new URL(url).pathname,
    setupRequest: (request) => ({ ...request, headers: signedHeaders(url, tokens, nonce) }),
  };
}

async function expectReady(label: string, url: string, headers: Record<string, string>): Promise<void> {
  const response = await fetch(url, { headers });
  const body = (await response.json()) as { ready?: boolean };
  if (response.status !== 200 || body.ready !== true)
    throw new Error(`${label}: ${response.status} ${JSON.stringify(body)}`);
}

/**
 * The rows' requests: the bearer read alone, the signed floor (the same plus one bare verification),
 * the signed request, and the signed request with no nonce, which parts the nonce's claim from the
 * rest of the signed path.
 */
/**
 * The setup-check's URL as a signature names it: as the service names itself (PUBLIC_URL, here with
 * the port 0 the bench starts it on, so the request's Host is not one of its names), which the
 * discovery document tells.
 */
export async function signedSetupCheckUrl(serverUrl: string): Promise<string> {
  const agentDocument = (await (await fetch(`${serverUrl}/.well-known/ai-agent.json`)).json()) as {
    signed_requests: { target_uri_base: string };
  };
  return `${agentDocument.signed_requests.target_uri_base}/api/agent/setup-check`;
}

async function signedSides(server: Server, tokens: SignedTokens): Promise<RoundSide[]> {
  const url = `${server.url}/api/agent/setup-check`;
  const signedUrl = await signedSetupCheckUrl(server.url);
  const bearer = { authorization: `Bearer ${tokens.bearer}` };
  const floor = { ...bearer, [FLOOR_HEADER]: '1' };
  await expectReady('bearer', url, bearer);
  await expectReady('floor', url, floor);
  await expectReady('signed', url, signedHeaders(signedUrl, tokens));
  return [
    { label: 'bearer read', server, request: { url, headers: bearer } },
    {
      label: 'signed request floor: bearer read plus one bare Ed25519 verify',
      server,
      request: { url, headers: floor },
    },
    {
      label: 'signed request (Ed25519, nonce)',
      server,
      request: { url, requests: [signedSetupCheck(signedUrl, tokens)] },
    },
    {
      label: 'signed request, no nonce (nothing stored)',
      server,
      request: { url, requests: [signedSetupCheck(signedUrl, tokens, false)] },
    },
  ];
}

/** The bearer read, the signed floor and the signed requests in interleaved rounds on one server started with SIGNED_FLOOR_SERVE. */
export async function signedRounds(
  server: Server,
  tokens: SignedTokens,
  rounds: number,
): Promise<RoundMedians[]> {
  return interleavedRounds('signed rows:', await signedSides(server, tokens), rounds);
}

export function signedSummary([bearer, floor, signed, unstored]: RoundMedians[]): string {
  const byRound = (share: (index: number) => number) =>
    signed.rounds.map((_, index) => Math.round(100 * share(index))).join(' %, ');
  // Server CPU per request moves far less than req/s on a shared machine: floor CPU over signed CPU
  // is the share of the floor's req/s the signed call would reach on a core of its own.
  const byRps = byRound((i) => signed.rounds[i].requestsPerSecond / floor.rounds[i].requestsPerSecond);
  const byCpu = byRound((i) => (floor.rounds[i].cpuPerRequest ?? 0) / (signed.rounds[i].cpuPerRequest ?? 1));
  const verify = Math.round(floor.cpu - bearer.cpu);
  const beyond = Math.round(signed.cpu - floor.cpu);
  return (
    `signed requests, medians: bearer read ${bearer.rps} req/s (${bearer.cpu} µs server CPU/req), signed floor ${floor.rps} req/s (${floor.cpu} µs), ` +
    `signed request ${signed.rps} req/s (${signed.cpu} µs), signed with no nonce ${unstored.rps} req/s (${unstored.cpu} µs); ` +
    `one verification costs ${verify} µs in the floor, the signed path ${beyond} µs beyond it, of which the nonce's claim ${Math.round(signed.cpu - unstored.cpu)} µs; ` +
    `signed/floor by round, req/s ${byRps} %, server CPU ${byCpu} % (target >= 90 %), non-2xx ${signed.rounds.reduce((sum, round) => sum + round.non2xx, 0)}`
  );
}
