import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { mcpNamespace } from '../src/surfaces/mcp-server-card.ts';
import { startTestApp, type TestApp } from './support/app.ts';

/**
 * The MCP Server Card (SEP-2127's extension) at the place it reserves, `<MCP URL>/server-card`, and at
 * the earlier drafts' `/.well-known/mcp/server-card.json`, found from the AI Catalog; valid against the
 * extension's published schema, consistent with what the MCP endpoint itself says.
 */
const CARD_SCHEMA = JSON.parse(
  readFileSync(new URL('./fixtures/mcp-server-card/server-card.schema.v1.json', import.meta.url), 'utf8'),
);

describe('MCP server card', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t?.close());

  test('the AI Catalog names the card; the card is valid, and the same at both addresses', async () => {
    const catalog = await fetch(`${t.baseUrl}/.well-known/ai-catalog.json`);
    assert.equal(catalog.status, 200);
    assert.match(catalog.headers.get('content-type') ?? '', /^application\/ai-catalog\+json/);
    const entries = ((await catalog.json()) as { entries: { type: string; url: string }[] }).entries;
    const entry = entries.find((candidate) => candidate.type === 'application/mcp-server-card+json');
    assert.ok(entry);
    assert.equal(entry.url, `${t.baseUrl}/api/mcp/server-card`);

    const response = await fetch(entry.url, { headers: { accept: 'application/mcp-server-card+json' } });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/mcp-server-card\+json/);
    assert.equal(response.headers.get('access-control-allow-origin'), '*');
    assert.equal(response.headers.get('cache-control'), 'public, max-age=3600');
    const card = (await response.json()) as Record<string, any>;

    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema(CARD_SCHEMA, 'server-card');
    const validate = ajv.getSchema('server-card#/$defs/ServerCard');
    assert.ok(validate);
    assert.equal(validate(card), true, JSON.stringify(validate.errors));

    assert.equal(card.name, 'local/agent-commons', '127.0.0.1 has no domain: never a reversed IP');
    assert.deepEqual(
      card.remotes.map((remote: { type: string; url: string }) => [remote.type, remote.url]),
      [['streamable-http', `${t.baseUrl}/api/mcp`]],
    );
    // The extension leaves primitives to the protocol's list operations.
    for (const key of ['tools', 'resources', 'prompts']) assert.equal(card[key], undefined, key);
    const mcpJson = (await (await fetch(`${t.baseUrl}/.well-known/mcp.json`)).json()) as Record<string, any>;
    assert.equal(card.name, mcpJson.name);
    assert.equal(card.version, mcpJson.version);

    const wellKnown = await fetch(`${t.baseUrl}/.well-known/mcp/server-card.json`);
    assert.equal(wellKnown.status, 200);
    assert.deepEqual(await wellKnown.json(), card);
  });

  test('the card agrees with what the endpoint says once connected (serverInfo version)', async () => {
    const card = (await (await fetch(`${t.baseUrl}/api/mcp/server-card`)).json()) as Record<string, any>;
    const answer = await fetch(card.remotes[0].url, {
      method: 'POST',
      headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
    });
    assert.equal(answer.status, 200);
    const { result } = (await answer.json()) as { result: { serverInfo: { version: string } } };
    assert.equal(result.serverInfo.version, card.version);
  });

  test('ETag revalidation answers 304; a cross-origin preflight is allowed', async () => {
    const first = await fetch(`${t.baseUrl}/api/mcp/server-card`);
    const etag = first.headers.get('etag');
    assert.ok(etag);
    const again = await fetch(`${t.baseUrl}/api/mcp/server-card`, { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
    assert.equal(await again.text(), '');
    const preflight = await fetch(`${t.baseUrl}/api/mcp/server-card`, {
      method: 'OPTIONS',
      headers: { origin: 'https://inspector.example', 'access-control-request-method': 'GET' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /If-None-Match/);
  });

  test('the namespace is the host in reverse-DNS order, or `local` for a host without a domain', () => {
    assert.equal(mcpNamespace('https://commons.example.org'), 'org.example.commons');
    assert.equal(mcpNamespace('https://Commons.Example.org.:8443/base'), 'org.example.commons');
    for (const url of [
      'http://127.0.0.1:3000',
      'http://10.1.2.3',
      'http://[::1]:3000',
      'http://[2001:db8::1]',
      'http://localhost:3000',
      'http://app.localhost',
      'http://intranet',
    ])
      assert.equal(mcpNamespace(url), 'local', url);
  });
});
