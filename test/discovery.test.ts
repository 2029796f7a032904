import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { MS } from '../src/clock.ts';
import { ALL_SCOPES } from '../src/domain/access/scopes.ts';
import { OPERATIONS } from '../src/operations/registry.ts';
import { mcpToolOperations } from '../src/surfaces/mcp-tools.ts';
import { PUBLISHER_META } from '../src/surfaces/well-known.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';

/**
 * Discovery documents generated, not kept by hand: mcp.json is a server.json the
 * MCP registry's published schema accepts, ai-agent.json lists each rate-limit policy once, and every
 * request llms.txt describes is sent as it says and reaches an operation.
 */
const SERVER_SCHEMA = JSON.parse(
  readFileSync(new URL('./fixtures/mcp-registry/server.schema.2025-12-11.json', import.meta.url), 'utf8'),
);

/** A request llms.txt describes: a method and a URL of this service, or a Markdown link (a GET). */
interface Described {
  method: string;
  url: string;
  link: boolean;
}

function describedRequests(text: string, base: string): Described[] {
  const found: Described[] = [];
  const escaped = base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  for (const match of text.matchAll(new RegExp(`\\]\\((${escaped}[^)\\s]*)\\)`, 'g')))
    found.push({ method: 'GET', url: match[1], link: true });
  for (const match of text.matchAll(new RegExp(`\\b(GET|POST|PUT|PATCH|DELETE) (${escaped}[^\\s),]*)`, 'g')))
    found.push({ method: match[1], url: match[2].replace(/[.:]$/, ''), link: false });
  return found;
}

for (const engine of engines) {
  describe(`discovery documents (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    let token: string;
    before(async () => {
      t = await startTestApp({
        engine: engine.name,
        limits: { anonymousPerMinute: 10_000, tokenPerMinute: 10_000 },
      });
      token = await t.token(await t.member('operator'), ALL_SCOPES);
    });
    after(() => t?.close());

    test('mcp.json is a server.json the MCP registry schema (2025-12-11) accepts', async () => {
      const response = await t.call('GET', '/.well-known/mcp.json');
      assert.equal(response.status, 200);
      const ajv = new Ajv({ strict: false, allErrors: true });
      addFormats.default(ajv);
      const validate = ajv.compile(SERVER_SCHEMA);
      assert.equal(validate(response.body), true, JSON.stringify(validate.errors));
      assert.match(response.body.name, /^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
      assert.ok(response.body.description.length <= 100);
      assert.equal(response.body.remotes.length, 1);
      assert.equal(response.body.remotes[0].type, 'streamable-http');
      assert.equal(response.body.remotes[0].url, `${t.baseUrl}/api/mcp`);
      assert.equal(response.body.$schema, SERVER_SCHEMA.$id);
      // A host without a domain (here 127.0.0.1) is named in the `local` namespace, never by a reversed IP.
      assert.equal(response.body.name, 'local/agent-commons');
      // Every key the schema does not define is under _meta, in the one key the registry keeps, within 4 KB.
      const defined = Object.keys(SERVER_SCHEMA.definitions.ServerDetail.properties);
      assert.deepEqual(
        Object.keys(response.body).filter((key) => !defined.includes(key)),
        [],
      );
      assert.deepEqual(Object.keys(response.body._meta), [PUBLISHER_META]);
      const published = response.body._meta[PUBLISHER_META];
      assert.ok(Buffer.byteLength(JSON.stringify(published)) <= 4096);
      // The tools are the registry's, by name.
      assert.deepEqual(
        published.tools,
        mcpToolOperations(OPERATIONS).map((op) => op.mcpTool),
      );
      // The remote it names is the MCP endpoint.
      const init = await t.call('POST', '/api/mcp', {
        headers: { accept: 'application/json, text/event-stream' },
        body: {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: '2025-06-18',
            capabilities: {},
            clientInfo: { name: 't', version: '1' },
          },
        },
      });
      assert.equal(init.status, 200, init.text);
      assert.ok(init.body.result.serverInfo);
    });

    test('ai-agent.json lists each rate-limit policy once, and every policy of the registry', async () => {
      const agent = (await t.call('GET', '/.well-known/ai-agent.json')).body;
      const names: string[] = agent.rate_limits.map((p: { name: string }) => p.name);
      assert.deepEqual(names, [...new Set(names)], 'no policy twice');
      assert.equal(names.filter((n) => n === 'operator_mutations').length, 1);
      // The device flow's requests as the signup operations declare them (the poll is a GET).
      const device = agent.auth.schemes[0].registration.device_code;
      assert.deepEqual(device.start_request, { method: 'POST', url: `${t.baseUrl}/api/agent/signup/start` });
      assert.equal(device.poll_request.method, 'GET');
      assert.equal(device.poll_request.url, `${t.baseUrl}/api/agent/signup/poll`);
      for (const op of OPERATIONS)
        for (const policy of [...(op.rateLimits?.(t.deps) ?? []), ...(op.quotas?.(t.deps) ?? [])])
          assert.ok(names.includes(policy.name), `${op.id}: ${policy.name}`);
    });

    test('every request llms.txt describes is sent as it says and reaches an operation', async () => {
      const text = (await t.call('GET', '/llms.txt')).text;
      const requests = describedRequests(text, t.baseUrl);
      const rest = OPERATIONS.filter((op) => op.path);
      assert.ok(requests.length >= rest.length, `${requests.length} requests found`);
      // A URL of this service mentioned with neither a method nor as a link would leave the reader guessing.
      const mentioned = [...text.matchAll(new RegExp(`${t.baseUrl.replace(/[.]/g, '\\.')}[^\\s),]*`, 'g'))]
        .length;
      assert.equal(mentioned - 1, requests.length, 'every URL (but the base) comes with its method');
      for (const { method, url, link } of requests) {
        t.clock.advance(MS.minute);
        const target = new URL(url);
        const response = await t.call(method, target.pathname + target.search, {
          token,
          headers: { accept: 'application/json, text/event-stream', origin: t.baseUrl },
          body: method === 'GET' ? undefined : {},
        });
        const where = `${method} ${url} → ${response.status} ${response.text.slice(0, 200)}`;
        if (link) {
          assert.equal(response.status, 200, where);
          continue;
        }
        // An operation answered, in its own words (its refusal of the empty input, a 404 of its own such
        // as no_issues): not the /api/ catch-all (no_such_operation) nor the plain 404 outside /api/.
        assert.notEqual(response.status, 405, where);
        assert.notEqual(response.body?.error?.code, 'no_such_operation', where);
        assert.ok(!(response.status === 404 && response.body?.error === 'not_found'), where);
      }
    });

    test('the device flow as llms.txt tells it: POST start, then GET poll with the device code', async () => {
      const text = (await t.call('GET', '/llms.txt')).text;
      const start = /(POST) (\S+\/api\/agent\/signup\/start)/.exec(text);
      const poll = /(GET) (\S+\/api\/agent\/signup\/poll)\?device_code=/.exec(text);
      assert.ok(start && poll, text);
      const started = await t.call(start[1], new URL(start[2]).pathname, {
        body: { scopes: ['read:public'], client_name: 'llms reader' },
      });
      assert.equal(started.status, 200, started.text);
      const polled = await t.call(
        poll[1],
        `${new URL(poll[2]).pathname}?device_code=${encodeURIComponent(started.body.device_code)}`,
      );
      assert.equal(polled.status, 200, polled.text);
      assert.equal(polled.body.status, 'pending');
    });
  });
}
