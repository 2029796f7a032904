import { Type } from '@sinclair/typebox';
import { apiError } from '../../core/errors.ts';
import { ALL_SCOPES, isScope, STARTER_SCOPE_SETS } from '../../domain/access/scopes.ts';
import { GRANT_LIFETIME_S, startGrant } from '../../domain/auth/device-grants.ts';
import { strictObject } from '../schemas.ts';
import { defineOperation } from '../types.ts';

const EXAMPLE_BODY = {
  scopes: STARTER_SCOPE_SETS.events_and_rsvp,
  client_name: 'My calendar agent',
  sandbox: false,
};

const Input = strictObject({
  scopes: Type.Optional(
    Type.Array(Type.String({ maxLength: 64 }), {
      maxItems: 64,
      description: 'Scopes requested (1 to 64); checked against the approving member’s tier.',
      examples: [EXAMPLE_BODY.scopes],
    }),
  ),
  client_name: Type.Optional(
    Type.String({
      maxLength: 80,
      description: 'Shown to the approving human, marked unverified.',
      examples: [EXAMPLE_BODY.client_name],
    }),
  ),
  sandbox: Type.Optional(Type.Boolean({ description: 'Mint a sandbox token (writes are simulated).' })),
});

const Output = Type.Object({
  device_code: Type.String({ description: 'Long secret; keep it, never display it.' }),
  user_code: Type.String({ description: 'Short code the human enters, XXXX-XXXX.' }),
  verify_url: Type.String({ format: 'uri' }),
  verify_url_complete: Type.String({ format: 'uri' }),
  expires_in: Type.Integer({ const: GRANT_LIFETIME_S }),
  interval: Type.Integer(),
});

export const startSignup = defineOperation<typeof Input.static, typeof Output.static>({
  id: 'startSignup',
  method: 'POST',
  path: '/api/agent/signup/start',
  tag: 'auth',
  summary: 'Begin the device-code grant',
  description:
    'Anonymous. Returns a device code to poll with and a user code for the human, who approves at verify_url while signed in. Scopes above the member’s tier come back in denied_scopes when the token is delivered.',
  credential: 'public',
  sandbox: 'real',
  idempotent: false,
  rateLimits: (deps) => [
    { name: 'signup_start', limit: deps.config.limits.signupStartPerHour, window: 3600, per: 'ip' },
  ],
  inputFrom: 'body',
  input: Input,
  output: Output,
  successStatus: 200,
  errors: [
    {
      status: 400,
      description: 'missing_scopes (with a usable example body), unknown_scopes, or validation',
    },
    { status: 429, description: 'More than 30 starts per IP per hour' },
  ],
  async handler({ input, deps, request }) {
    const scopes = input.scopes ?? [];
    if (scopes.length === 0) {
      throw apiError('missing_scopes', {
        extra: { example: EXAMPLE_BODY, starter_sets: STARTER_SCOPE_SETS },
      });
    }
    const unknown = scopes.filter((s) => !isScope(s));
    if (unknown.length) {
      throw apiError('unknown_scopes', {
        unknown,
        extra: { unknown_scopes: unknown, valid_scopes: ALL_SCOPES, example: EXAMPLE_BODY },
      });
    }
    const grant = await startGrant(deps, {
      scopes,
      clientName: input.client_name,
      sandbox: input.sandbox ?? false,
      ip: request.ip,
      userAgent: request.userAgent,
    });
    const verifyUrl = `${deps.config.publicUrl}/signup-with-agent`;
    return {
      headers: { 'cache-control': 'no-store' },
      body: {
        device_code: grant.deviceCode,
        user_code: grant.userCode,
        verify_url: verifyUrl,
        verify_url_complete: `${verifyUrl}?code=${grant.userCode}`,
        expires_in: grant.expiresIn,
        interval: grant.interval,
      },
    };
  },
});
