import { Type } from '@sinclair/typebox';
import { apiError } from '../../core/errors.ts';
import { GRANT_LIFETIME_S, POLL_INTERVAL_S, pollGrant } from '../../domain/auth/device-grants.ts';
import { strictObject } from '../schemas.ts';
import { defineOperation, refusedWith } from '../types.ts';

const Input = strictObject({
  device_code: Type.Optional(
    Type.String({ minLength: 16, maxLength: 64, description: 'The device_code from signup start.' }),
  ),
});

/** What a poll without device_code answers: how the flow goes. */
const FlowDescription = Type.Object(
  {
    flow: Type.String(),
    start: Type.Object({ method: Type.String(), url: Type.String(), body: Type.Object({}) }),
    poll: Type.Object({
      method: Type.String(),
      url: Type.String(),
      interval_seconds: Type.Integer(),
      expires_in_seconds: Type.Integer(),
    }),
    deviations: Type.Array(Type.String()),
  },
  { description: 'Without device_code: how the flow goes.' },
);

const PollStatus = Type.Object(
  {
    status: Type.Union([Type.Literal('pending'), Type.Literal('completed'), Type.Literal('cancelled')]),
    interval: Type.Optional(Type.Integer()),
    expires_in: Type.Optional(Type.Integer()),
    agent_token: Type.Optional(Type.String({ description: 'Only when completed; delivered exactly once.' })),
    tier: Type.Optional(Type.String()),
    granted_scopes: Type.Optional(Type.Array(Type.String())),
    denied_scopes: Type.Optional(Type.Array(Type.String())),
    member_id: Type.Optional(Type.String()),
    member_name: Type.Optional(Type.String()),
    sandbox: Type.Optional(Type.Boolean()),
    pending_tier: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    next_steps: Type.Optional(Type.Unknown()),
    reason: Type.Optional(Type.String({ description: 'Only when cancelled.' })),
  },
  { additionalProperties: true },
);

const Output = Type.Union([PollStatus, FlowDescription]);

const NO_STORE = { 'cache-control': 'no-store' };

export const pollSignup = defineOperation<typeof Input.static, unknown>({
  id: 'pollSignup',
  method: 'GET',
  path: '/api/agent/signup/poll',
  tag: 'auth',
  summary: 'Poll the device-code grant',
  description:
    'Poll every `interval` seconds. 200 pending; then once 200 completed with the token (or cancelled when the human declined); afterwards, or after expiry, 410. Polling faster than the interval gets 429 slow_down with the new interval. Without device_code it describes the flow.',
  credential: 'public',
  sandbox: 'real',
  idempotent: false,
  inputFrom: 'query',
  input: Input,
  output: Output,
  successStatus: 200,
  errors: [
    { status: 400, description: 'device_code is not 16 to 64 characters' },
    refusedWith(['unknown_device_code'], 'unknown_device_code'),
    {
      status: 410,
      description:
        'already_delivered (the token was delivered), access_denied (the human declined and the cancelled answer was given), or expired_token',
    },
    { status: 429, description: 'slow_down: polled faster than the interval' },
  ],
  async handler({ input, deps }) {
    if (!input.device_code) {
      return {
        headers: NO_STORE,
        body: {
          flow: 'device_code (RFC 8628, with the deviations below)',
          start: {
            method: 'POST',
            url: `${deps.config.publicUrl}/api/agent/signup/start`,
            body: { scopes: ['read:public'] },
          },
          poll: {
            method: 'GET',
            url: `${deps.config.publicUrl}/api/agent/signup/poll?device_code=<device_code>`,
            interval_seconds: POLL_INTERVAL_S,
            expires_in_seconds: GRANT_LIFETIME_S,
          },
          deviations: [
            'GET with a query parameter instead of a form POST',
            'the token field is agent_token, not access_token',
            'pending is 200 {status:"pending"}, not 400',
            'a human refusal is 200 {status:"cancelled"} once, then 410',
          ],
        },
      };
    }
    const outcome = await pollGrant(deps, input.device_code);
    switch (outcome.kind) {
      case 'pending':
        return {
          headers: NO_STORE,
          body: { status: 'pending', interval: outcome.interval, expires_in: outcome.expiresIn },
        };
      case 'slow_down':
        throw apiError('slow_down', {
          interval: outcome.interval,
          retryAfterSeconds: outcome.interval,
          extra: { interval: outcome.interval },
        });
      case 'cancelled':
        return { headers: NO_STORE, body: { status: 'cancelled', reason: outcome.reason } };
      case 'gone':
        if (outcome.why === 'expired') throw apiError('expired_token');
        if (outcome.why === 'cancelled') throw apiError('access_denied');
        throw apiError('already_delivered');
      case 'unknown':
        throw apiError('unknown_device_code');
      case 'completed': {
        const base = deps.config.publicUrl;
        return {
          headers: NO_STORE,
          body: {
            status: 'completed',
            agent_token: outcome.token,
            tier: outcome.tier,
            granted_scopes: outcome.granted,
            denied_scopes: outcome.denied,
            member_id: outcome.grant.member_id,
            member_name: outcome.memberName,
            sandbox: outcome.grant.sandbox === 1,
            pending_tier: null,
            next_steps: {
              store_token: 'Keep agent_token in a secret store; it is shown only now.',
              check_setup: `${base}/api/agent/setup-check`,
              mcp_url: `${base}/api/mcp`,
              revoke: `${base}/api/agent/token/revoke`,
              docs: `${base}/docs`,
            },
          },
        };
      }
    }
  },
});
