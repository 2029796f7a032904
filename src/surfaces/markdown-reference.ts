import { bodyCapOf } from '../operations/body-cap.ts';
import type { Deps } from '../operations/services.ts';
import { isRestOperation, type Operation } from '../operations/types.ts';

export const CREDENTIAL_TEXT: Record<Operation['credential'], string> = {
  public: 'anonymous (a bearer is read if sent)',
  optional_bearer: 'anonymous, or bearer to attribute',
  bearer: 'agent bearer',
  session: 'browser session only',
  bearer_or_session: 'agent bearer or browser session',
};

/** A rate window in words: `1 h`, `60 s`, `UTC day`. */
export function windowText(value: number | 'utc_day'): string {
  if (value === 'utc_day') return 'UTC day';
  return value % 3600 === 0 ? `${value / 3600} h` : `${value} s`;
}

/** docs/api-reference.md, rendered from the registry (a test keeps the committed file current). */
export function renderMarkdownReference(deps: Deps, allOperations: readonly Operation[]): string {
  const operations = allOperations.filter(isRestOperation);
  const toolOnly = allOperations.filter((op) => !isRestOperation(op));
  const limitsOf = (op: Operation) =>
    [...(op.rateLimits?.(deps) ?? []), ...(op.quotas?.(deps) ?? [])]
      .map((p) => `${p.limit}/${p.per}/${windowText(p.window)}`)
      .join(', ');
  const lines = [
    '# Endpoint reference',
    '',
    '<!-- Generated from the operation registry by `npm run docs`; do not edit by hand. -->',
    '',
    'Conventions shared by every endpoint (errors, rate headers, idempotency, sandbox) are in [api.md](api.md).',
    'Schemas: `/openapi.json`; the same content as a page: `/docs`.',
    '',
    '| Method | Path | Operation | MCP tool | Credential | Scope | Sandbox | Limits |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const op of operations) {
    const limits = limitsOf(op);
    const paths = [op.path, ...(op.aliases ?? [])].map((p) => `\`${p}\``).join(', ');
    lines.push(
      `| ${op.method} | ${paths} | \`${op.id}\` | ${op.mcpTool ? `\`${op.mcpTool}\`` : '—'} | ${CREDENTIAL_TEXT[op.credential]} | ${op.scope ?? '—'} | ${op.sandbox} | ${limits || '—'} |`,
    );
  }
  for (const op of operations) {
    lines.push('', `## ${op.method} ${op.path}`, '', `**${op.summary}.** ${op.description ?? ''}`, '');
    lines.push(`Success: ${op.successStatus}.${op.idempotent ? ' Accepts `Idempotency-Key`.' : ''}`);
    if (op.inputFrom === 'body') lines.push(`Body cap: ${bodyCapOf(op, deps)} bytes.`);
    if (op.errors.length) {
      lines.push('', '| Status | When |', '|---|---|');
      for (const error of op.errors) lines.push(`| ${error.status} | ${error.description} |`);
    }
  }
  if (toolOnly.length) {
    lines.push(
      '',
      '## MCP and A2A only',
      '',
      'These operations have no REST path: call them as MCP tools at `/api/mcp` or as A2A capabilities (`tasks/send`) at `/api/a2a`.',
      '',
      '| MCP tool | Operation | Credential | Scope | Sandbox | Limits | About |',
      '|---|---|---|---|---|---|---|',
    );
    for (const op of toolOnly) {
      lines.push(
        `| \`${op.mcpTool}\` | \`${op.id}\` | ${CREDENTIAL_TEXT[op.credential]} | ${op.scope ?? '—'} | ${op.sandbox} | ${limitsOf(op) || '—'} | ${op.summary}. ${op.description ?? ''} |`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
