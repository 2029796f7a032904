import { Type } from '@sinclair/typebox';
import { API_VERSION } from '../api-version.ts';
import { strictObject } from '../schemas.ts';
import { defineOperation } from '../types.ts';

/** `ic_health`: MCP and A2A only (no REST path; REST has /healthz). */
export const agentHealth = defineOperation<Record<string, never>, { ok: true; version: string }>({
  id: 'agentHealth',
  method: 'POST',
  tag: 'agent',
  summary: 'Check that the service answers',
  description: 'Public. Answers {ok: true, version} with the dated API version.',
  mcpTool: 'ic_health',
  credential: 'public',
  sandbox: 'real',
  idempotent: false,
  recordsActivity: false,
  inputFrom: 'body',
  input: strictObject({}),
  output: Type.Object({ ok: Type.Literal(true), version: Type.String() }),
  successStatus: 200,
  errors: [],
  handler: async () => ({ body: { ok: true as const, version: API_VERSION } }),
});
