import {
  COMPONENTS_WITH_BODY,
  COMPONENTS_WITHOUT_BODY,
  FRESHNESS_SECONDS,
  SIGNATURE_AGENT,
  SIGNATURE_ALGORITHM,
  SIGNATURE_LABEL,
  WEB_BOT_AUTH_TAG,
} from '../operations/pipeline/signature-rules.ts';

/**
 * The signed-request profile (reference §7) as the discovery documents describe it: ai-agent.json's
 * `signed_requests` and the protected-resource metadata's (an RFC 9728 extension parameter). Built
 * from the constants the verifier itself uses, so the description cannot drift from the check.
 */
export function signedRequestsProfile(base: string) {
  return {
    supported: true,
    standard: 'RFC 9421 HTTP Message Signatures',
    alg_values_supported: [SIGNATURE_ALGORITHM],
    label: SIGNATURE_LABEL,
    keyid:
      'The bound key id: kid_ followed by the key’s RFC 7638 JWK thumbprint (base64url SHA-256), or the bare thumbprint (web-bot-auth).',
    covered_components: {
      with_body: [...COMPONENTS_WITH_BODY],
      without_body: [...COMPONENTS_WITHOUT_BODY],
      optional: [SIGNATURE_AGENT],
    },
    parameters: { required: ['created', 'keyid', 'alg'], optional: ['expires', 'nonce', 'tag'] },
    tag: `Optional; when sent, "${WEB_BOT_AUTH_TAG}" (the web-bot-auth profile).`,
    authority:
      '@authority and @target-uri name the authority the request was sent to when it is this service’s (target_uri_base’s; on a loopback target_uri_base also localhost, 127.0.0.1 and [::1] on its port), otherwise target_uri_base’s.',
    content_digest:
      'RFC 9530 Content-Digest with sha-256 (sha-512 also checked) over the body bytes as sent.',
    freshness_seconds: FRESHNESS_SECONDS,
    nonce: 'Optional; each nonce is accepted once, across all instances.',
    target_uri_base: base,
    key_binding: {
      credential: 'browser session (a bearer cannot bind, revoke or toggle)',
      key_format: { kty: 'OKP', crv: 'Ed25519', x: '<base64url public key>' },
      register: `${base}/api/agent/keys/register`,
      revoke: `${base}/api/agent/keys/revoke`,
      enforce_toggle: `${base}/api/agent/keys/enforce-toggle`,
      one_key_per_token: true,
    },
    enforcement:
      'Per token. Off: unsigned calls pass, and a signature that is sent is verified. On: a call not signed by the bound key is refused.',
    failure: { status: 401, error: 'signature verification failed: <reason>' },
  };
}
