import assert from 'node:assert/strict';
import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { describe, test } from 'node:test';
import { parseDictionary } from 'structured-headers';
import {
  contentDigestOf,
  contentDigestProblem,
  profileSignatureBase,
  signatureBase,
} from '../src/operations/pipeline/signature-base.ts';
import { Refused, signatureInput } from '../src/operations/pipeline/signature-rules.ts';

/** RFC 9421 B.1.4, the Ed25519 test key. */
const PRIVATE_KEY =
  '-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF\n-----END PRIVATE KEY-----\n';
const PUBLIC_KEY =
  '-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=\n-----END PUBLIC KEY-----\n';

/** RFC 9421 B.2, the test request. */
const REQUEST = {
  method: 'POST',
  url: 'https://example.com/foo?param=Value&Pet=dog',
  headers: {
    host: 'example.com',
    date: 'Tue, 20 Apr 2021 02:07:55 GMT',
    'content-type': 'application/json',
    'content-digest':
      'sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:',
    'content-length': '18',
  },
};
const BODY = '{"hello": "world"}';

/** RFC 9421 B.2.6: the Signature-Input, the signature base and the signature, as printed in the RFC. */
const SIGNATURE_INPUT =
  'sig-b26=("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"';
const SIGNATURE =
  'sig-b26=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==:';
const BASE = [
  '"date": Tue, 20 Apr 2021 02:07:55 GMT',
  '"@method": POST',
  '"@path": /foo',
  '"@authority": example.com',
  '"content-type": application/json',
  '"content-length": 18',
  '"@signature-params": ("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"',
].join('\n');

describe('RFC 9421 test vectors', () => {
  const input = parseDictionary(SIGNATURE_INPUT).get('sig-b26');
  const signature = parseDictionary(SIGNATURE).get('sig-b26');

  test('B.2.6: the signature base is the RFC’s, byte for byte', () => {
    assert.ok(input && Array.isArray(input[0]));
    const base = signatureBase(REQUEST, input as Parameters<typeof signatureBase>[1]);
    assert.equal(base, BASE);
    assert.deepEqual(Buffer.from(base), Buffer.from(BASE, 'utf8'));
  });

  test('B.2.6: the RFC’s signature verifies with the B.1.4 key, and signing reproduces it', () => {
    const base = Buffer.from(signatureBase(REQUEST, input as Parameters<typeof signatureBase>[1]));
    const bytes = Buffer.from(signature?.[0] as ArrayBuffer);
    assert.equal(bytes.length, 64);
    assert.equal(verify(null, base, createPublicKey(PUBLIC_KEY), bytes), true);
    // Ed25519 is deterministic: the same key over the same base gives the RFC's bytes.
    assert.deepEqual(sign(null, base, createPrivateKey(PRIVATE_KEY)), bytes);
    const tampered = Buffer.from(base);
    tampered[tampered.length - 2] ^= 1;
    assert.equal(verify(null, tampered, createPublicKey(PUBLIC_KEY), bytes), false);
  });

  test('RFC 9530: the B.2 request’s sha-512 Content-Digest matches its body; a changed body does not', () => {
    assert.equal(contentDigestProblem(REQUEST.headers['content-digest'], BODY), undefined);
    assert.equal(
      contentDigestProblem(REQUEST.headers['content-digest'], '{"hello": "World"}'),
      'Content-Digest does not match the body',
    );
    // RFC 9530 B.1's sha-256 example: {"hello": "world"}\n
    assert.equal(
      contentDigestOf('{"hello": "world"}\n'),
      'sha-256=:RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg=:',
    );
    assert.equal(
      contentDigestProblem(undefined, BODY),
      'the Content-Digest header is missing (RFC 9530, sha-256)',
    );
    assert.equal(contentDigestProblem('md5=:AAAA:', BODY), 'Content-Digest carries no sha-256 digest');
  });
});

describe('the profile’s own signature base', () => {
  const requests = [
    { method: 'get', url: 'http://127.0.0.1:3000/api/agent/setup-check', headers: {} },
    { method: 'GET', url: 'https://agents.example.org/api/activity/me?limit=5&x=%20', headers: {} },
    {
      method: 'POST',
      url: 'http://localhost:3000/api/a2a',
      headers: {
        'content-digest': ' sha-256=:RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg=: ',
        'signature-agent': ['"https://agent.example/directory"', '"https://other.example/"'],
      },
    },
  ];
  const inputs = [
    'sig1=("@method" "@authority" "@target-uri");created=1618884473;keyid="kid_abc";alg="ed25519"',
    'sig1=("@target-uri" "@method" "@authority" "content-digest" "signature-agent");created=1618884473;keyid="abc";alg="ed25519";expires=1618884533;nonce="a+b/c=";tag="web-bot-auth"',
    // Escapes, and parameters the profile refuses (a boolean, a decimal), which take the library's path.
    String.raw`sig1=("@method" "@authority" "@target-uri");created=-1;nonce="a\"b\\c"`,
    'sig1=("@method" "@authority" "@target-uri");created=1;flag;ratio=1.5',
  ];

  test('is the library’s, byte for byte, for every component the profile covers', () => {
    for (const request of requests)
      for (const text of inputs) {
        const input = parseDictionary(text).get('sig1') as Parameters<typeof signatureBase>[1];
        if (!request.headers['content-digest'] && text.includes('content-digest')) continue;
        const authority = new URL(request.url).host;
        assert.equal(profileSignatureBase({ ...request, authority }, input), signatureBase(request, input));
      }
  });
});

describe('Signature-Input, as the signature step reads it', () => {
  const headers = [
    'sig1=("@method" "@authority" "@target-uri");created=1618884473;keyid="kid_abc";alg="ed25519";nonce="a+b/c= x"',
    'sig1=("@target-uri" "@method" "@authority" "content-digest" "signature-agent");created=1618884473;keyid="abc";alg="ed25519";expires=1618884533;tag="web-bot-auth";nonce=""',
    'sig1=();created=0001',
    'sig1=("@method")',
    // Shapes the usual header does not take, which go through the structured-field parser.
    'sig1=("@method" "@authority");created=1;created=2;keyid="k"',
    String.raw`sig1=("@method" "@authority" "@target-uri");created=-1;nonce="a\"b\\c"`,
    'sig1=("@method";req "@authority");created=1;flag;ratio=1.5;tok=abc',
    'sig1=(  "@method"  "@authority" );created=1',
    'sig0=("@method"), sig1=("@authority");created=1',
    'sig1=("@method");created=1, sig2=("@authority")',
    'sig1=:AAAA:;created=1',
    'sig1="@method";created=1',
  ];

  test('is the structured-field parser’s reading, for the usual header and any other', () => {
    for (const header of headers)
      assert.deepEqual(signatureInput(header), parseDictionary(header).get('sig1'), header);
  });

  test('a header the parser refuses is refused with its reason', () => {
    for (const header of ['sig1=("@method"', 'sig1=("@METHOD")x', 'sig2=("@method")'])
      assert.throws(() => signatureInput(header), Refused, header);
  });
});
