import { Type } from '@sinclair/typebox';

/**
 * What every public content tool shares: no token, read-only, a GET with its arguments in the query
 * string on REST (each names its own path) and the same arguments as an object on MCP and A2A.
 */
export const PUBLIC_CONTENT_TOOL = {
  method: 'GET',
  credential: 'public',
  sandbox: 'real',
  idempotent: false,
  inputFrom: 'query',
  successStatus: 200,
} as const;

export const limitField = (max: number, fallback: number) =>
  Type.Optional(
    Type.Integer({ minimum: 1, maximum: max, description: `1 to ${max} (default ${fallback}).` }),
  );

export const BAD_INPUT = { status: 400, description: 'Input out of range or unknown field' };
