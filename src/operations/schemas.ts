import { type TSchema, Type } from '@sinclair/typebox';
import { ERROR_KINDS } from '../core/errors.ts';

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

/**
 * Plain JSON Schema from a TypeBox schema, the one converter every surface uses (OpenAPI, MCP,
 * A2A): TypeBox's symbol keys are left out, and a schema carrying an `$id` becomes `{$ref}` where
 * `reference` names one for it (OpenAPI's shared components), otherwise loses the `$id` (MCP and
 * A2A resolve no references). `root: false` keeps the outermost schema itself inline (a component's
 * own definition).
 */
export function toJsonSchema(
  schema: TSchema,
  reference: (id: string) => string | undefined = () => undefined,
  root = true,
): Record<string, unknown> {
  const walk = (value: unknown, outermost: boolean): unknown => {
    if (Array.isArray(value)) return value.map((item) => walk(item, false));
    if (!value || typeof value !== 'object') return value;
    const record = value as Record<string, unknown>;
    if (typeof record.$id === 'string' && (root || !outermost)) {
      const ref = reference(record.$id);
      if (ref) return { $ref: ref };
    }
    const plain: Record<string, unknown> = {};
    for (const key of Object.keys(record)) if (key !== '$id') plain[key] = walk(record[key], false);
    return plain;
  };
  return walk(schema, true) as Record<string, unknown>;
}
