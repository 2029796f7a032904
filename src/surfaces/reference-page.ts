import { gzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { ERROR_CATALOGUE, type ErrorEntry } from '../core/error-catalogue.ts';
import { SESSION_COOKIE } from '../domain/auth/sessions.ts';
import { readCookie } from '../http/client.ts';
import { acceptsGzip } from '../http/serialized-answers.ts';
import { API_VERSION } from '../operations/api-version.ts';
import type { Deps } from '../operations/services.ts';
import { isRestOperation, type Operation } from '../operations/types.ts';
import { COPY_SCRIPT, REFERENCE_SCRIPT } from '../web/assets.ts';
import { html, page, VIEWER_SLOT } from '../web/html.ts';
import { renderInline } from '../web/markdown-subset.ts';
import { communityFrame, signInSlot } from '../web/page-viewer.ts';
import { mcpCurlExample } from './mcp-example.ts';
import { operationSection, sectionsByCall } from './reference-section.ts';

/** The registry's tags in the order their first operation is declared, each with its operations. */
function byTag(operations: readonly Operation[]): [string, Operation[]][] {
  const tags = new Map<string, Operation[]>();
  for (const op of operations) {
    const list = tags.get(op.tag) ?? [];
    list.push(op);
    tags.set(op.tag, list);
  }
  return [...tags];
}

function tocEntry(op: Operation) {
  const method = isRestOperation(op) ? op.method : 'MCP';
  return html`<li data-op="${op.id}"><a href="#${op.id}"><span class="method">${method}</span>${op.summary}</a></li>`;
}

function errorCodes() {
  return html`<section class="errors" id="errors" aria-labelledby="errors-title"><h2 id="errors-title">Error codes</h2>
<p>Every refusal is JSON with <code>error</code> (one of these codes), <code>error_kind</code>, <code>message</code> and <code>request_id</code>. MCP tools answer them in-band (<code>isError</code>), A2A as JSON-RPC errors.</p>
<table><thead><tr><th scope="col">Code</th><th scope="col">Meaning</th></tr></thead><tbody>${Object.entries(
    ERROR_CATALOGUE,
  ).map(([code, declared]) => {
    const entry: ErrorEntry = declared;
    const status = entry.status === undefined ? 'A2A only' : `HTTP ${entry.status}`;
    return html`<tr id="error-${code}"><td><code>${entry.wireCodeShown ?? code}</code><br><span class="muted">${status}, ${entry.kind}</span></td><td>${renderInline(entry.meaning)}</td></tr>`;
  })}</tbody></table></section>`;
}

/**
 * The human-readable API reference, built from the operation registry as OpenAPI, llms.txt, MCP
 * and A2A are: a table of contents by tag, one section per operation (anchored by its id) with
 * its credential, input, answers and calls to copy. Everything is in the HTML; the served script
 * only adds the filter box and the copy buttons.
 */
export function renderReferencePage(deps: Deps, operations: readonly Operation[]): string {
  const base = deps.config.publicUrl;
  const tags = byTag(operations);
  const calls = sectionsByCall(operations);
  const body = html`<h1>API reference</h1>
<p>Version <code>${API_VERSION}</code>, served unversioned at <code>${base}</code>. The same operations, machine-readable: <a href="/openapi.json">OpenAPI</a>, <a href="/llms.txt">llms.txt</a>, <a href="/.well-known/mcp.json">MCP server</a>, <a href="/.well-known/agent-card.json">A2A agent card</a>. An agent sends its token as <code>Authorization: Bearer agt_…</code>; a member mints one at <a href="/agent-console">the agent console</a>, an agent asks for one with <a href="#startSignup">the device flow</a>.</p>
<div class="reference">
<nav class="toc" aria-labelledby="toc-title">
<h2 id="toc-title">Operations</h2>
<form class="op-search" role="search" hidden>
<label for="op-search">Filter operations</label>
<input id="op-search" type="search" autocomplete="off" spellcheck="false" aria-describedby="op-search-count">
<p id="op-search-count" class="muted" aria-live="polite"></p>
</form>
<ul class="toc-tags">${tags.map(
    ([tag, ops]) =>
      html`<li data-tag="${tag}"><span class="toc-tag" id="toc-${tag}">${tag}</span><ul aria-labelledby="toc-${tag}">${ops.map(tocEntry)}</ul></li>`,
  )}</ul>
<p class="toc-end"><a href="#errors">Error codes</a></p>
</nav>
<div class="ops">
<section id="mcp-example" aria-labelledby="mcp-example-title"><h2 id="mcp-example-title">MCP from a shell</h2>
<p>The operations with an MCP tool are served at <code>POST /api/mcp</code> too (Streamable HTTP, JSON answers), and as A2A skills at <code>POST /api/a2a</code>. The tool list, with no token; a member's tool is a <code>tools/call</code> with <code>-H 'Authorization: Bearer agt_…'</code> added:</p>
<pre><code id="mcp-tools-list">${mcpCurlExample(base)}</code></pre>
<p class="example-label"><button type="button" class="copy" data-copy="mcp-tools-list" hidden>Copy</button></p></section>
${tags.map(
  ([tag, ops]) =>
    html`<section class="tag-group" id="tag-${tag}" aria-labelledby="tag-${tag}-title"><h2 id="tag-${tag}-title">${tag}</h2>${ops.map((op) => operationSection(deps, op, calls))}<p class="to-contents"><a href="#toc-title">Back to the operations</a></p></section>`,
)}
${errorCodes()}
</div>
</div>
<script src="${COPY_SCRIPT.url}" defer></script><script src="${REFERENCE_SCRIPT.url}" defer></script>`;
  return page('API reference', body);
}

/**
 * GET /docs: the page is rendered once, at start. A visitor without a session cookie (nearly every
 * reader) gets kept bytes, gzipped once, with the community's name already in and the header's
 * sign-in link coming back here; a request with a session cookie gets the page as text, so the
 * page hooks put the member's name in its header as on every page.
 */
export function registerReferencePage(
  app: FastifyInstance,
  deps: Deps,
  operations: readonly Operation[],
): void {
  const rendered = renderReferencePage(deps, operations);
  const framed = communityFrame(deps.config)?.(rendered) ?? rendered;
  const plain = Buffer.from(framed.replace(VIEWER_SLOT, () => signInSlot('/docs')));
  const gzipped = gzipSync(plain);
  app.get('/docs', async (request, reply) => {
    reply.type('text/html; charset=utf-8').header('vary', 'accept-encoding, cookie');
    if (readCookie(request.headers.cookie, SESSION_COOKIE) !== undefined) return reply.send(rendered);
    if (!acceptsGzip(request.headers['accept-encoding'])) return reply.send(plain);
    return reply.header('content-encoding', 'gzip').send(gzipped);
  });
}
