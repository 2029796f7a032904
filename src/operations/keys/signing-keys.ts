import { Type } from '@sinclair/typebox';
import { apiError } from '../../core/errors.ts';
import {
  bindSigningKey,
  SigningKeyError,
  setSigningEnforcement,
  type TokenSigning,
  unbindSigningKey,
} from '../../domain/auth/signing-keys.ts';
import { strictObject } from '../schemas.ts';
import { defineOperation, refusedWith } from '../types.ts';

/**
 * The signing-key operations (spec 4.4, reference §7): browser session only, so a leaked bearer can
 * neither bind its own key nor switch enforcement off. Each change reaches the member's event log.
 */

const TokenId = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'The id of one of the member’s tokens (tok_…), as the agent console lists them.',
});

const Jwk = Type.Object(
  {
    kty: Type.Literal('OKP'),
    crv: Type.Literal('Ed25519'),
    x: Type.String({ description: 'The 32-byte public key, base64url without padding.' }),
  },
  {
    additionalProperties: false,
    description: 'An Ed25519 public key as a JWK (RFC 8037). Private members (d) are refused.',
    // RFC 8037 A.2's public key.
    examples: [{ kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' }],
  },
);

const Signing = {
  ok: Type.Literal(true),
  token_id: Type.String(),
  key_id: Type.Union([Type.String(), Type.Null()], {
    description:
      'The keyid a signature names: kid_ and the RFC 7638 JWK thumbprint; null when no key is bound.',
  }),
  thumbprint: Type.Union([Type.String(), Type.Null()], {
    description: 'RFC 7638 JWK thumbprint (base64url SHA-256).',
  }),
  bound_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  enforced: Type.Boolean({ description: 'True: a call with this token must be signed by the bound key.' }),
};

const SigningOutput = Type.Object(Signing);
const RevokeOutput = Type.Object({
  ...Signing,
  revoked: Type.Boolean({ description: 'False when no key was bound (nothing changed).' }),
  revoked_key_id: Type.Union([Type.String(), Type.Null()]),
});

function view(signing: TokenSigning) {
  return {
    ok: true as const,
    token_id: signing.tokenId,
    key_id: signing.keyId,
    thumbprint: signing.thumbprint,
    bound_at: signing.boundAt === null ? null : new Date(signing.boundAt).toISOString(),
    enforced: signing.enforced,
  };
}

async function answering<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof SigningKeyError)) throw error;
    throw apiError(error.reason, { message: error.message });
  }
}

const SESSION_ERRORS = [
  { status: 401, description: 'No browser session (agent tokens are refused here)' },
  refusedWith(['token_not_found'], 'token_not_found: no live token of the member has this id'),
];

const ACTOR = { kind: 'session' };

const common = {
  tag: 'auth',
  credential: 'session',
  sandbox: 'real',
  idempotent: false,
  recordsActivity: false,
  bodyLimit: 8 * 1024,
  inputFrom: 'body',
  successStatus: 200,
} as const;

const RegisterInput = strictObject({ token_id: TokenId, jwk: Jwk });

export const registerSigningKey = defineOperation<typeof RegisterInput.static, typeof SigningOutput.static>({
  ...common,
  id: 'registerSigningKey',
  method: 'POST',
  path: '/api/agent/keys/register',
  summary: 'Bind an Ed25519 public key to one of the member’s tokens',
  description:
    'Browser session only, so a leaked bearer cannot bind a key. One key per token: a token that already has one answers 409 key_already_bound (revoke it first). Once bound, every signed call with the token is verified (RFC 9421, reference §7); enforcement (POST /api/agent/keys/enforce-toggle) makes unsigned calls fail too.',
  input: RegisterInput,
  output: SigningOutput,
  errors: [
    ...SESSION_ERRORS,
    refusedWith(['invalid_key'], 'invalid_key: not an Ed25519 public key JWK'),
    refusedWith(['key_already_bound'], 'key_already_bound: the token has a key; revoke it first'),
  ],
  async handler({ input, principal, deps }) {
    const signing = await answering(() =>
      bindSigningKey(deps, principal.member.id, input.token_id, input.jwk, ACTOR),
    );
    return { body: view(signing) };
  },
});

const TokenInput = strictObject({ token_id: TokenId });

export const revokeSigningKey = defineOperation<typeof TokenInput.static, typeof RevokeOutput.static>({
  ...common,
  id: 'revokeSigningKey',
  method: 'POST',
  path: '/api/agent/keys/revoke',
  summary: 'Clear the signing key bound to a token',
  description:
    'Browser session only. Signatures by the revoked key fail from the next call on. Enforcement is left as it was: an enforced token then answers nothing until a new key is bound (key rotation: revoke, then register). Revoking when no key is bound answers 200 with revoked false.',
  input: TokenInput,
  output: RevokeOutput,
  errors: SESSION_ERRORS,
  async handler({ input, principal, deps }) {
    const { signing, revokedKeyId } = await answering(() =>
      unbindSigningKey(deps, principal.member.id, input.token_id, ACTOR),
    );
    return { body: { ...view(signing), revoked: revokedKeyId !== null, revoked_key_id: revokedKeyId } };
  },
});

const ToggleInput = strictObject({
  token_id: TokenId,
  enforce: Type.Optional(Type.Boolean({ description: 'The state to set; absent: flip the current one.' })),
});

export const toggleSignatureEnforcement = defineOperation<
  typeof ToggleInput.static,
  typeof SigningOutput.static
>({
  ...common,
  id: 'toggleSignatureEnforcement',
  method: 'POST',
  path: '/api/agent/keys/enforce-toggle',
  summary: 'Require (or stop requiring) signed calls for a token',
  description:
    'Browser session only. With enforcement on, a call with the token that is not signed by its bound key is refused with 401 "signature verification failed: …". Turning it on needs a bound key (409 no_signing_key). Send enforce to set a state, or nothing to flip it.',
  input: ToggleInput,
  output: SigningOutput,
  errors: [...SESSION_ERRORS, refusedWith(['no_signing_key'], 'no_signing_key: bind a key before enforcing')],
  async handler({ input, principal, deps }) {
    const signing = await answering(() =>
      setSigningEnforcement(deps, principal.member.id, input.token_id, input.enforce, ACTOR),
    );
    return { body: view(signing) };
  },
});
