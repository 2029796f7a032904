// The signed request's floor, loaded into the service's own process (node --import ./bench/signed-floor.mjs
// bin/agent-commons.js serve): a request that carries x-bench-verify gets one bare crypto.verify of
// an Ed25519 signature over a base the size of the signed request's, with the key made once, before the service
// answers it as it would without the header. A signed call cannot cost less than this: the bearer
// call and one verification.
import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { subscribe } from 'node:diagnostics_channel';

/** The header bench/signed-requests.ts sends on the floor's requests. */
const FLOOR_HEADER = 'x-bench-verify';

// The signed request's base, line for line, on a port of the same length and with a key id and nonce of the same size.
const base = Buffer.from(
  [
    '"@method": GET',
    '"@authority": 127.0.0.1:40000',
    '"@target-uri": http://127.0.0.1:40000/api/agent/setup-check',
    `"@signature-params": ("@method" "@authority" "@target-uri");created=1784203200;keyid="kid_${'k'.repeat(43)}";alg="ed25519";nonce="${'n'.repeat(36)}"`,
  ].join('\n'),
);
const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const signature = sign(null, base, privateKey);

// Published by node:http for every request, before its handler runs (the service's included).
subscribe('http.server.request.start', ({ request }) => {
  if (request.headers[FLOOR_HEADER] === undefined) return;
  if (!verify(null, base, publicKey, signature)) throw new Error('the floor signature does not verify');
});
