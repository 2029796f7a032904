import { Type } from '@sinclair/typebox';

/** What every public content tool shares: MCP and A2A only (no REST path), no token, read-only. */
export const PUBLIC_CONTENT_TOOL = {
  method: 'POST',
  credential: 'public',
  sandbox: 'real',
  idempotent: false,
  inputFrom: 'body',
  successStatus: 200,
} as const;

export const limitField = (max: number, fallback: number) =>
  Type.Optional(
    Type.Integer({ minimum: 1, maximum: max, description: `1 to ${max} (default ${fallback}).` }),
  );

export const BAD_INPUT = { status: 400, description: 'Input out of range or unknown field' };
