// Issue 18's row: GET /api/agent/setup-check signed (RFC 9421, Ed25519, a fresh nonce per request)
// side by side with the same call with the bearer only, on one server. BENCH_ONLY=signed runs it alone.
import { generateKeyPairSync, type KeyObject, randomUUID, sign } from 'node:crypto';
import type autocannon from 'autocannon';
import { type InnerList, parseDictionary } from 'structured-headers';
import { systemClock } from '../src/clock.ts';
import { bindSigningKey, setSigningEnforcement } from '../src/domain/auth/signing-keys.ts';
import { signatureBase } from '../src/operations/pipeline/signature-base.ts';
import { openDatabase } from '../src/storage/database.ts';
import { WriteBatcher } from '../src/storage/write-batcher.ts';
import { type Figures, load, mintBenchToken } from './support.ts';

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

/** The headers of one signed GET, as an agent would compute them: a fresh created and nonce each time. */
function signedHeaders(url: string, tokens: SignedTokens): Record<string, string> {
  const created = Math.floor(Date.now() / 1000);
  const inputValue = `("@method" "@authority" "@target-uri");created=${created};keyid="${tokens.keyId}";alg="ed25519";nonce="${randomUUID()}"`;
  const input = parseDictionary(`sig1=${inputValue}`).get('sig1') as InnerList;
  const base = signatureBase({ method: 'GET', url, headers: {} }, input);
  const signature = sign(null, Buffer.from(base), tokens.privateKey).toString('base64');
  return {
    authorization: `Bearer ${tokens.signed}`,
    'signature-input': `sig1=${inputValue}`,
    signature: `sig1=:${signature}:`,
  };
}

async function expectReady(label: string, url: string, headers: Record<string, string>): Promise<void> {
  const response = await fetch(url, { headers });
  const body = (await response.json()) as { ready?: boolean };
  if (response.status !== 200 || body.ready !== true)
    throw new Error(`${label}: ${response.status} ${JSON.stringify(body)}`);
}

/** The two rows, bearer first; both checked to be ready:true before the load. */
export async function signedVsBearer(
  serverUrl: string,
  pid: number,
  tokens: SignedTokens,
): Promise<[Figures, Figures]> {
  const url = `${serverUrl}/api/agent/setup-check`;
  // Signed as the service names itself (PUBLIC_URL), which the discovery document tells.
  const agentDocument = (await (await fetch(`${serverUrl}/.well-known/ai-agent.json`)).json()) as {
    signed_requests: { target_uri_base: string };
  };
  const signedUrl = `${agentDocument.signed_requests.target_uri_base}/api/agent/setup-check`;
  await expectReady('bearer', url, { authorization: `Bearer ${tokens.bearer}` });
  await expectReady('signed', url, signedHeaders(signedUrl, tokens));
  const bearer = await load(
    '(g1) GET /api/agent/setup-check, bearer only',
    { url, headers: { authorization: `Bearer ${tokens.bearer}` } },
    pid,
  );
  const signedRequest: autocannon.Request = {
    method: 'GET',
    path: '/api/agent/setup-check',
    setupRequest: (request) => ({ ...request, headers: signedHeaders(signedUrl, tokens) }),
  };
  const signed = await load(
    '(g2) GET /api/agent/setup-check, signed (Ed25519, nonce)',
    { url, requests: [signedRequest] },
    pid,
  );
  return [bearer, signed];
}

export function signedSummary([bearer, signed]: [Figures, Figures]): string {
  const share = Math.round((100 * signed.requestsPerSecond) / bearer.requestsPerSecond);
  return `signed requests: bearer only ${bearer.requestsPerSecond} req/s (${bearer.cpuPerRequest} µs server CPU/req), signed ${signed.requestsPerSecond} req/s (${signed.cpuPerRequest} µs server CPU/req): signed/bearer ${share}% (target >= 60%), non-2xx ${signed.non2xx}`;
}
