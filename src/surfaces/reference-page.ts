import { html, page } from '../web/html.ts';
import { mcpCurlExample } from './mcp-example.ts';

interface OpenApiOperation {
  operationId: string;
  summary: string;
  description?: string;
  deprecated?: boolean;
  security: Record<string, string[]>[];
  parameters?: { name: string; in: string; required: boolean; description?: string }[];
  requestBody?: { content: { 'application/json': { schema: unknown } } };
  responses: Record<string, { description: string }>;
  'x-mcp-tool'?: string;
  'x-sandbox'?: string;
}

function credentialText(security: Record<string, string[]>[]): string {
  return security
    .map((requirement) => {
      const [scheme] = Object.keys(requirement);
      if (!scheme) return 'anonymous';
      const scopes = requirement[scheme];
      return scopes.length ? `${scheme} (${scopes.join(', ')})` : scheme;
    })
    .join(' or ');
}

/** The human-readable API reference, rendered from the same OpenAPI document agents read. */
export function renderReferencePage(openapi: {
  info: { version: string };
  servers: { url: string }[];
  paths: Record<string, Record<string, OpenApiOperation>>;
}): string {
  const entries = Object.entries(openapi.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
  );
  const body = html`<h1>API reference</h1>
<p>Version <code>${openapi.info.version}</code>. Machine-readable: <a href="/openapi.json">/openapi.json</a>. Served unversioned at the root.</p>
<section id="mcp-example"><h2>MCP from a shell</h2>
<p>The operations with an MCP tool are served at <code>POST /api/mcp</code> too (Streamable HTTP, JSON answers). The tool list, with no token; a member's tool is a <code>tools/call</code> with <code>-H 'Authorization: Bearer agt_…'</code> added:</p>
<pre><code>${mcpCurlExample(openapi.servers[0]?.url ?? '')}</code></pre></section>
${entries.map(
  ({ path, method, op }) => html`<section class="op" id="${op.operationId}">
  <h2><span class="method">${method}</span> <code>${path}</code>${op.deprecated ? html` <span class="tag">deprecated</span>` : ''}</h2>
  <p><strong>${op.summary}</strong> — <code>${op.operationId}</code>${op['x-mcp-tool'] ? html`, MCP tool <code>${op['x-mcp-tool']}</code>` : ''}</p>
  <p>${op.description}</p>
  <p>Credential: ${credentialText(op.security)}. Sandbox tokens: ${op['x-sandbox']}.</p>
  ${
    op.parameters?.length
      ? html`<table><tr><th>Parameter</th><th>In</th><th>Required</th><th>About</th></tr>${op.parameters.map(
          (p) =>
            html`<tr><td><code>${p.name}</code></td><td>${p.in}</td><td>${p.required ? 'yes' : 'no'}</td><td>${p.description}</td></tr>`,
        )}</table>`
      : ''
  }
  ${op.requestBody ? html`<details><summary>Request body schema</summary><pre>${JSON.stringify(op.requestBody.content['application/json'].schema, null, 2)}</pre></details>` : ''}
  <table><tr><th>Status</th><th>Meaning</th></tr>${Object.entries(op.responses).map(
    ([status, r]) => html`<tr><td>${status}</td><td>${r.description}</td></tr>`,
  )}</table>
</section>`,
)}`;
  return page('API reference', body);
}
