import { Type } from '@sinclair/typebox';
import { apiError } from '../../core/errors.ts';
import { revokeToken as revoke } from '../../domain/auth/tokens.ts';
import { strictObject } from '../schemas.ts';
import { defineOperation } from '../types.ts';

const Output = Type.Object({
  ok: Type.Literal(true),
  revoked: Type.Literal(true),
  prefix: Type.String({ description: 'Display prefix of the revoked token.' }),
  already_revoked: Type.Boolean({ description: 'True when the token was already revoked.' }),
});

export const revokeOwnToken = defineOperation<Record<string, never>, typeof Output.static>({
  id: 'revokeToken',
  method: 'POST',
  path: '/api/agent/token/revoke',
  tag: 'auth',
  summary: 'Revoke the calling token',
  description:
    'A token can revoke only itself. Idempotent: revoking an already revoked token answers 200 with already_revoked.',
  mcpTool: 'ic_token_revoke',
  credential: 'bearer',
  acceptsRevokedToken: true,
  sandbox: 'real',
  // Ends the token; revoking again reports the first revocation.
  effect: 'destructive',
  repeatable: true,
  idempotent: false,
  inputFrom: 'body',
  input: strictObject({}),
  output: Output,
  successStatus: 200,
  errors: [{ status: 401, description: 'Missing, malformed or unknown bearer' }],
  async handler({ principal, revokedToken, deps }) {
    const tokenId = principal.kind === 'bearer' ? principal.token.id : revokedToken?.id;
    if (!tokenId) throw apiError('missing_token', { message: 'Send the token to revoke as the bearer.' });
    const result = await revoke(deps, tokenId);
    if (!result) throw apiError('invalid_token', { message: 'The bearer token is not recognized.' });
    return {
      body: { ok: true, revoked: true, prefix: result.prefix, already_revoked: result.alreadyRevoked },
    };
  },
});
