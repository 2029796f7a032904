import { ERROR_CATALOGUE, type HttpErrorCode } from '../core/error-catalogue.ts';
import { bodyCapOf } from '../operations/body-cap.ts';
import type { Deps } from '../operations/services.ts';
import { isRestOperation, type Operation } from '../operations/types.ts';
import { html, SafeHtml } from '../web/html.ts';
import { renderInline, renderMarkdownSubset } from '../web/markdown-subset.ts';
import { a2aExamples, mcpExamples, restCurlExample } from './call-examples.ts';
import { CREDENTIAL_TEXT, windowText } from './markdown-reference.ts';
import { agentInputSchema, withPipelineErrors } from './openapi.ts';

/** One operation's section of /docs: what it is, who may call it, its input, answers and examples. */

interface FieldSchema {
  type?: string | string[];
  description?: string;
  format?: string;
  const?: unknown;
  enum?: unknown[];
  anyOf?: FieldSchema[];
  items?: FieldSchema;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  maxItems?: number;
  default?: unknown;
}

const SANDBOX_TEXT: Record<Operation['sandbox'], string> = {
  real: 'run for real',
  simulated: 'simulated: a receipt of what would have happened, nothing changes',
  denied: 'refused (sandbox_denied)',
};

/** A field's type in a few words: `string, 1–80 chars`, `one of approve, deny`, `array of string`. */
export function typeText(schema: FieldSchema): string {
  if (schema.const !== undefined) return `always ${JSON.stringify(schema.const)}`;
  const choices = schema.enum ?? schema.anyOf?.map((option) => option.const);
  if (choices?.length && choices.every((choice) => choice !== undefined))
    return `one of ${choices.map((choice) => String(choice)).join(', ')}`;
  if (schema.anyOf?.length) return schema.anyOf.map(typeText).join(' or ');
  const type = Array.isArray(schema.type) ? schema.type.join(' or ') : (schema.type ?? 'any');
  const words = [schema.format ? `${type} (${schema.format})` : type];
  if (type === 'array' && schema.items) words[0] = `array of ${typeText(schema.items)}`;
  if (schema.minLength !== undefined || schema.maxLength !== undefined)
    words.push(`${schema.minLength ?? 0}–${schema.maxLength ?? '∞'} chars`);
  if (schema.minimum !== undefined || schema.maximum !== undefined)
    words.push(`${schema.minimum ?? '−∞'}–${schema.maximum ?? '∞'}`);
  if (schema.maxItems !== undefined) words.push(`up to ${schema.maxItems} items`);
  if (schema.default !== undefined) words.push(`default ${JSON.stringify(schema.default)}`);
  return words.join(', ');
}

/** Each catalogued code by name, with the HTTP status it is answered with. */
const STATUS_OF_CODE = new Map(
  Object.entries(ERROR_CATALOGUE).map(([code, entry]) => [
    code,
    'status' in entry ? entry.status : undefined,
  ]),
);

/** The catalogue codes a refusal answers with: the ones it declares and the ones its text names. */
function codesOf(status: number, declared: readonly HttpErrorCode[] | undefined, text: string): string[] {
  const named = (text.match(/[a-z0-9_]+/g) ?? []).filter((word) => STATUS_OF_CODE.get(word) === status);
  return [...new Set([...(declared ?? []), ...named])];
}

function credentialFacts(deps: Deps, op: Operation): SafeHtml {
  const scope = op.scope
    ? html`<dt>Scope</dt><dd><code>${op.scope}</code>${
        deps.tiers.tierFor(op.scope)
          ? html`, granted from tier <strong>${deps.tiers.tierFor(op.scope)}</strong> up`
          : ', granted by no tier'
      }</dd>`
    : '';
  return html`<dt>Credential</dt><dd>${CREDENTIAL_TEXT[op.credential]}</dd>${scope}`;
}

function facts(deps: Deps, op: Operation): SafeHtml {
  const limits = [...(op.rateLimits?.(deps) ?? []), ...(op.quotas?.(deps) ?? [])];
  return html`<dl class="facts">${credentialFacts(deps, op)}
<dt>Sandbox tokens</dt><dd>${SANDBOX_TEXT[op.sandbox]}</dd>
${op.mcpTool ? html`<dt>MCP tool, A2A skill</dt><dd><code>${op.mcpTool}</code></dd>` : ''}
${op.aliases?.length ? html`<dt>Also at</dt><dd>${op.aliases.map((alias, i) => html`${i ? ', ' : ''}<code>${alias}</code>`)}</dd>` : ''}
${limits.length ? html`<dt>Limits</dt><dd>${limits.map((p, i) => html`${i ? '; ' : ''}${p.limit} per ${p.per} per ${windowText(p.window)}`)}</dd>` : ''}
${op.idempotent ? html`<dt>Retries</dt><dd>Accepts <code>Idempotency-Key</code>: a retry with the same key within 24 hours replays the first answer</dd>` : ''}
${op.inputFrom === 'body' ? html`<dt>Body cap</dt><dd>${bodyCapOf(op, deps)} bytes</dd>` : ''}
${op.deprecated ? html`<dt>Deprecated</dt><dd>since ${op.deprecated.since}, sunset ${op.deprecated.sunset}${op.deprecated.link ? html` (<a href="${op.deprecated.link}">what changes</a>)` : ''}</dd>` : ''}
</dl>`;
}

function inputTable(op: Operation): SafeHtml {
  const schema = agentInputSchema(op) as { properties?: Record<string, FieldSchema>; required?: string[] };
  const fields = Object.entries(schema.properties ?? {});
  if (!fields.length) return html`<p>Takes no input.</p>`;
  const what = !isRestOperation(op)
    ? 'Arguments'
    : op.inputFrom === 'query'
      ? 'Query parameters'
      : 'Body fields';
  return html`<h4>${what}</h4>
<table><thead><tr><th scope="col">Field</th><th scope="col">About</th></tr></thead><tbody>${fields.map(
    ([name, field]) =>
      html`<tr><td><code>${name}</code><br><span class="muted">${typeText(field)}${schema.required?.includes(name) ? ', required' : ''}</span></td><td>${renderInline(field.description ?? '')}</td></tr>`,
  )}</tbody></table>`;
}

function answersTable(op: Operation): SafeHtml {
  const success =
    op.sandbox !== 'simulated'
      ? 'Success'
      : op.successStatus === 200
        ? 'Success; or, for a sandbox token, the simulated receipt (nothing changed)'
        : 'Success (a sandbox token gets 200 with the simulated receipt, nothing changed)';
  return html`<h4>Answers</h4>
<table class="answers"><thead><tr><th scope="col">Status</th><th scope="col">When, and the <code>error</code> codes</th></tr></thead><tbody>
<tr><td>${op.successStatus}</td><td>${success}</td></tr>${withPipelineErrors(op).map((error) => {
    const codes = codesOf(error.status, error.codes, error.description);
    return html`<tr><td>${error.status}</td><td>${renderInline(error.description)}${
      codes.length
        ? html`<br>${codes.map((code, i) => html`${i ? ', ' : ''}<a href="#error-${code}"><code>${code}</code></a>`)}`
        : ''
    }</td></tr>`;
  })}</tbody></table>`;
}

/** Text for an element's content: only what could start markup is escaped (quotes stay as typed). */
function textContent(text: string): SafeHtml {
  return new SafeHtml(text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'));
}

/** A block to copy: its label, the text, and a button the served script shows (it needs JavaScript). */
function copyable(id: string, label: string, text: string): SafeHtml {
  return html`<div class="example"><p class="example-label"><span id="${id}-label">${label}</span> <button type="button" class="copy" data-copy="${id}" aria-describedby="${id}-label" hidden>Copy</button></p>
<pre><code id="${id}">${textContent(text)}</code></pre></div>`;
}

function examples(deps: Deps, op: Operation): SafeHtml {
  const base = deps.config.publicUrl;
  const blocks: SafeHtml[] = [];
  if (isRestOperation(op)) blocks.push(copyable(`${op.id}-curl`, 'curl', restCurlExample(base, op)));
  if (op.mcpTool) {
    const tool = op as Operation & { mcpTool: string };
    const mcp = mcpExamples(base, tool);
    if (!isRestOperation(op)) blocks.push(copyable(`${op.id}-curl`, 'curl (MCP)', mcp.curl));
    else blocks.push(copyable(`${op.id}-mcp-curl`, 'MCP, with curl', mcp.curl));
    blocks.push(
      copyable(`${op.id}-mcp`, 'MCP tools/call request', JSON.stringify(JSON.parse(mcp.body), null, 2)),
    );
    blocks.push(copyable(`${op.id}-a2a`, 'A2A SendMessage, with curl', a2aExamples(base, tool).curl));
  }
  return html`<h4>Examples</h4>${blocks}`;
}

/** The words the page's filter matches besides the section's visible heading and prose. */
function searchTerms(op: Operation): string {
  return [op.id, op.mcpTool, op.tag, op.method, op.path, ...(op.aliases ?? [])].filter(Boolean).join(' ');
}

/** Each REST call by `METHOD path` (aliases too), to the id of its operation's section. */
export function sectionsByCall(operations: readonly Operation[]): Map<string, string> {
  const calls = new Map<string, string>();
  for (const op of operations)
    if (isRestOperation(op))
      for (const path of [op.path, ...(op.aliases ?? [])]) calls.set(`${op.method} ${path}`, op.id);
  return calls;
}

/**
 * Rendered prose with each `METHOD /path` it names in passing made a link to that operation's
 * section. Only text outside tags, links and code is touched; the words themselves do not change.
 */
function linkCalls(rendered: SafeHtml, calls: ReadonlyMap<string, string>): SafeHtml {
  let depth = 0;
  const parts = rendered.value.split(/(<[^>]*>)/).map((part) => {
    if (part.startsWith('<')) {
      if (/^<(a|code)\b/.test(part)) depth++;
      else if (/^<\/(a|code)>/.test(part)) depth--;
      return part;
    }
    if (depth > 0) return part;
    return part.replace(/\b(GET|POST|DELETE) (\/[A-Za-z0-9/_-]+)/g, (whole, method, path) => {
      const id = calls.get(`${method} ${path}`);
      return id ? `<a href="#${id}">${whole}</a>` : whole;
    });
  });
  return new SafeHtml(parts.join(''));
}

export function operationSection(deps: Deps, op: Operation, calls: ReadonlyMap<string, string>): SafeHtml {
  const where = isRestOperation(op)
    ? html`<span class="method">${op.method}</span> <code>${op.path}</code>`
    : html`<span class="method">MCP</span> <code>${op.mcpTool}</code>`;
  return html`<section class="op" id="${op.id}" aria-labelledby="${op.id}-title" data-terms="${searchTerms(op)}">
<h3 id="${op.id}-title">${where}${op.deprecated ? html` <span class="tag">deprecated</span>` : ''}</h3>
<p class="op-summary"><strong>${op.summary}</strong> · <code>${op.id}</code> · <a href="#${op.id}">link<span class="visually-hidden"> to ${op.summary}</span></a></p>
<div class="op-about">${linkCalls(renderMarkdownSubset(op.description ?? ''), calls)}</div>
${facts(deps, op)}
${inputTable(op)}
${answersTable(op)}
${examples(deps, op)}
</section>`;
}
