#!/usr/bin/env node
// Signs requests to an agent-commons service with an Ed25519 key (RFC 9421, the service's strict
// profile). Node 22 or later and one package from npm: `npm install http-message-signatures@1.0.6`.
//
//   node signed-request.mjs keygen [agent-key.pem]
//       makes a key pair, keeps the private key in the file (mode 0600), prints the public JWK to
//       bind to a token (agent console, or POST /api/agent/keys/register) and the key id.
//   AGENT_COMMONS_TOKEN=agt_… AGENT_COMMONS_KEY=agent-key.pem \
//     node signed-request.mjs METHOD URL [JSON_BODY]
//       sends one signed request and prints the status and the answer.
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import signatures from 'http-message-signatures';

/** `kid_` and the key's RFC 7638 JWK thumbprint: the keyid the service expects. */
function keyIdOf(x) {
  const thumbprint = createHash('sha256').update(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`).digest('base64url');
  return `kid_${thumbprint}`;
}

function publicJwkOf(privateKey) {
  const { kty, crv, x } = createPublicKey(privateKey).export({ format: 'jwk' });
  return { kty, crv, x };
}

async function signedFetch({ method, url, body, token, privateKey }) {
  const headers = { authorization: `Bearer ${token}` };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    // RFC 9530: the digest of the exact bytes sent.
    headers['content-digest'] = `sha-256=:${createHash('sha256').update(body).digest('base64')}:`;
  }
  const { headers: signed } = await signatures.httpbis.signMessage(
    {
      key: {
        id: keyIdOf(publicJwkOf(privateKey).x),
        alg: 'ed25519',
        sign: async (data) => sign(null, data, privateKey),
      },
      name: 'sig1',
      fields: ['@method', '@authority', '@target-uri', ...(body !== undefined ? ['content-digest'] : [])],
      params: ['created', 'keyid', 'alg', 'nonce'],
      paramValues: { nonce: randomUUID() },
    },
    { method, url, headers },
  );
  return fetch(url, { method, headers: signed, body });
}

const [command, ...rest] = process.argv.slice(2);
if (command === 'keygen') {
  const file = rest[0] ?? 'agent-key.pem';
  const { privateKey } = generateKeyPairSync('ed25519');
  writeFileSync(file, privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600 });
  const jwk = publicJwkOf(privateKey);
  console.log(JSON.stringify({ private_key_file: file, jwk, key_id: keyIdOf(jwk.x) }, null, 2));
} else if (command && rest[0]) {
  const token = process.env.AGENT_COMMONS_TOKEN;
  const keyFile = process.env.AGENT_COMMONS_KEY ?? 'agent-key.pem';
  if (!token) throw new Error('Set AGENT_COMMONS_TOKEN to the agent token.');
  const privateKey = createPrivateKey(readFileSync(keyFile));
  const response = await signedFetch({ method: command.toUpperCase(), url: rest[0], body: rest[1], token, privateKey });
  console.log(response.status);
  console.log(await response.text());
} else {
  console.error('usage: signed-request.mjs keygen [file] | signed-request.mjs METHOD URL [JSON_BODY]');
  process.exit(2);
}
