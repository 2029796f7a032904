import { type TSchema, Type } from '@sinclair/typebox';
import { ERROR_KINDS } from '../http/errors.ts';

export const RateInfoSchema = Type.Object(
  { current: Type.Integer(), remaining: Type.Integer(), limit: Type.Integer() },
  { $id: 'RateInfo', description: 'Per-token rate snapshot returned by write endpoints.' },
);

export const ErrorSchema = Type.Object(
  {
    error: Type.String({ description: 'An error code.' }),
    ok: Type.Optional(Type.Literal(false, { description: 'Present on bearer auth-gate rejections.' })),
    error_kind: Type.Optional(Type.Union(ERROR_KINDS.map((k) => Type.Literal(k)))),
    message: Type.Optional(Type.String()),
    rate: Type.Optional(RateInfoSchema),
    retry_after_seconds: Type.Optional(Type.Integer()),
    tier: Type.Optional(Type.String({ description: "Caller's tier on a 403 tier/scope rejection." })),
    current_tier: Type.Optional(Type.String({ description: "Caller's tier on a tier validation 400." })),
    detail: Type.Optional(Type.String()),
    request_id: Type.Optional(Type.String()),
  },
  {
    $id: 'Error',
    additionalProperties: true,
    description: 'Operation error. Clients must tolerate unknown keys.',
  },
);

/** An object that names every field and refuses others: a typo gets a 400 instead of being ignored. */
export function strictObject<T extends Record<string, TSchema>>(properties: T, description?: string) {
  return Type.Object(properties, { additionalProperties: false, description });
}

export const Via = Type.Union([Type.Literal('agent'), Type.Literal('session')], {
  description: 'Which credential path served the call.',
});
