import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { parseItem } from 'structured-headers';
import { SCOPE_CATALOG } from '../src/domain/access/scopes.ts';
import { OPERATIONS } from '../src/operations/registry.ts';
import { isRestOperation, type Operation } from '../src/operations/types.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { legacyEcho } from './support/test-operations.ts';

const EVERY_SCOPE = Object.keys(SCOPE_CATALOG).sort();
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** What OpenAPI describes: the operations with a REST path (MCP/A2A-only ones are not in it). */
const ALL = [...OPERATIONS, legacyEcho].filter(isRestOperation);

async function getJson(t: TestApp, path: string) {
  const response = await fetch(t.baseUrl + path, { signal: AbortSignal.timeout(5000) });
  assert.equal(response.status, 200, path);
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/, path);
  return (await response.json()) as any;
}

/** The lowest tier granting each scope, walked from the ladder definitions (tiers are cumulative). */
function lowestTiers(ladder: { name: string; adds: string[] }[]): Map<string, string> {
  const lowest = new Map<string, string>();
  for (const tier of ladder)
    for (const scope of tier.adds) if (!lowest.has(scope)) lowest.set(scope, tier.name);
  return lowest;
}

describe('API description and discovery documents', () => {
  let t: TestApp;
  let doc: any;
  before(async () => {
    t = await startTestApp({ extraOperations: [legacyEcho] });
    doc = await getJson(t, '/openapi.json');
  });
  after(() => t?.close());

  describe('/openapi.json', () => {
    test('is a valid OpenAPI 3.1 document pinned to 2026-07-16, unversioned at the root', async () => {
      const result = await new Validator().validate(doc);
      assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
      assert.match(doc.openapi, /^3\.1\.\d+$/);
      assert.equal(doc.info.version, '2026-07-16');
      assert.deepEqual(doc.servers, [{ url: t.baseUrl }]);
      for (const path of Object.keys(doc.paths)) {
        assert.ok(!path.startsWith('/v1'), `${path} has a version prefix`);
        assert.ok(!/\/v\d+\//.test(path), `${path} carries a version segment`);
      }
      assert.deepEqual(doc.security, [{}], 'the default security is anonymous (spec 5.3)');
      assert.equal(doc.components.securitySchemes.agentBearer.type, 'http');
      assert.equal(doc.components.securitySchemes.agentBearer.scheme, 'bearer');
      assert.equal(doc.components.securitySchemes.browserSession.in, 'cookie');
      assert.equal(doc.components.securitySchemes.browserSession.name, '__session');
    });

    test('describes exactly the registry: every operation and alias, nothing else', () => {
      const expected = ALL.flatMap((op) =>
        [op.path, ...(op.aliases ?? [])].map((path) => `${op.method} ${path}`),
      ).sort();
      const described = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
        .flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`))
        .sort();
      assert.deepEqual(described, expected);
    });

    test('operationIds are unique (OpenAPI 3.1 §4.8.10): an alias gets its own, derived from the canonical one', () => {
      const ids: string[] = [];
      for (const op of ALL) {
        const [canonical, ...aliases] = [op.path, ...(op.aliases ?? [])];
        const method = op.method.toLowerCase();
        assert.equal(doc.paths[canonical][method].operationId, op.id);
        ids.push(op.id);
        for (const alias of aliases) {
          const id = doc.paths[alias][method].operationId;
          assert.ok(id.startsWith(op.id) && id !== op.id, `${alias}: ${id}`);
          ids.push(id);
        }
      }
      assert.equal(new Set(ids).size, ids.length, `duplicate operationIds: ${ids.join(', ')}`);
    });

    for (const op of ALL) {
      test(`${op.id}: method, security, MCP tool, input, responses`, () => {
        for (const path of [op.path, ...(op.aliases ?? [])]) {
          const described = doc.paths[path]?.[op.method.toLowerCase()];
          assert.ok(described, `${op.method} ${path} is missing`);
          assert.deepEqual(described.tags, [op.tag]);
          assert.equal(described.summary, op.summary);
          checkSecurity(op, described.security);

          if (op.mcpTool) assert.equal(described['x-mcp-tool'], op.mcpTool);
          else assert.equal(described['x-mcp-tool'], undefined);
          if (op.deprecated) assert.equal(described.deprecated, true);
          else assert.equal(described.deprecated, undefined, 'only deprecated operations say so');

          checkInput(op, described);

          const responses = described.responses as Record<string, any>;
          assert.ok(responses[String(op.successStatus)], `success ${op.successStatus} undocumented`);
          assert.ok(responses[String(op.successStatus)].content['application/json'].schema);
          for (const error of op.errors) {
            const response = responses[String(error.status)];
            assert.ok(response, `${error.status} undocumented`);
            // The pipeline may add a refusal of its own to a declared status (the cross-site 403).
            assert.ok(response.description.startsWith(error.description), response.description);
            assert.deepEqual(response.content['application/json'].schema, {
              $ref: '#/components/schemas/Error',
            });
            if (error.status === 429) assert.ok(response.headers['Retry-After'], '429 documents Retry-After');
          }
          assert.ok(responses[String(op.successStatus)].headers.RateLimit, 'RateLimit documented');
          assert.ok(responses[String(op.successStatus)].headers['RateLimit-Policy']);
        }
      });
    }

    test('every write a browser session can make documents the cross-site 403; reads and bearer-only writes do not', () => {
      let sessionWrites = 0;
      for (const op of OPERATIONS) {
        if (!op.path) continue;
        const documented = doc.paths[op.path.replace(/:(\w+)/g, '{$1}')]?.[op.method.toLowerCase()];
        assert.ok(documented, `${op.method} ${op.path}`);
        const forbidden = documented.responses['403']?.description ?? '';
        const sessionWrite =
          (op.credential === 'session' || op.credential === 'bearer_or_session') && op.method !== 'GET';
        if (sessionWrite) sessionWrites++;
        assert.equal(/cross_site_request/.test(forbidden), sessionWrite, `${op.id}: ${forbidden}`);
      }
      assert.ok(sessionWrites >= 3, `session writes found: ${sessionWrites}`);
    });

    test('the Error component has the spec 2.2 shape', () => {
      const error = doc.components.schemas.Error;
      assert.deepEqual(error.required, ['error']);
      assert.equal(error.properties.error.type, 'string');
      assert.equal(error.properties.ok.const, false);
      assert.ok(error.properties.error_kind.anyOf.some((k: { const: string }) => k.const === 'rate_limit'));
      for (const field of ['message', 'rate', 'retry_after_seconds', 'tier', 'current_tier', 'detail']) {
        assert.ok(error.properties[field], `Error.${field}`);
      }
      assert.notEqual(error.additionalProperties, false, 'clients must tolerate unknown keys');
      assert.deepEqual(doc.components.schemas.RateInfo.required.sort(), ['current', 'limit', 'remaining']);
    });
  });

  describe('/docs', () => {
    test('is HTML listing every operationId, with the prose escaped', async () => {
      const response = await fetch(`${t.baseUrl}/docs`, { signal: AbortSignal.timeout(5000) });
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
      const page = await response.text();
      assert.match(page, /^<!doctype html>/i);
      for (const op of ALL) {
        assert.ok(page.includes(`<code>${op.id}</code>`), `${op.id} is not listed`);
        assert.ok(page.includes(op.path), `${op.path} is not listed`);
      }
      assert.ok(!page.includes('<script>alert('), 'the summary markup is escaped');
      assert.ok(page.includes('&lt;script&gt;alert(&quot;summary&quot;)&lt;/script&gt;'));
      assert.ok(!page.includes('<img src=x'), 'the description markup is escaped');
      assert.ok(page.includes('&lt;img src=x onerror=alert(1)&gt;'));
      assert.ok(page.includes('&amp; &quot;quotes&quot;'));
      assert.ok(page.includes('deprecated'), 'the deprecated operation is marked');
    });
  });

  describe('deprecation headers', () => {
    const since = Date.UTC(2026, 7, 1);

    test('a deprecated operation answers with Deprecation (RFC 9745), Sunset (RFC 8594) and Link', async () => {
      for (const path of [legacyEcho.path, ...legacyEcho.aliases!]) {
        for (const query of ['?note=hi', `?note=${'x'.repeat(21)}`]) {
          const response = await fetch(t.baseUrl + path + query, { signal: AbortSignal.timeout(5000) });
          assert.equal(response.status, query === '?note=hi' ? 200 : 400, `${path}${query}`);
          const deprecation = response.headers.get('deprecation');
          assert.equal(deprecation, `@${since / 1000}`);
          const [date] = parseItem(deprecation!);
          assert.ok(date instanceof Date, 'Deprecation is a structured-field date');
          assert.equal(date.getTime(), since);
          const sunset = response.headers.get('sunset')!;
          assert.equal(sunset, 'Mon, 01 Feb 2027 00:00:00 GMT');
          assert.match(sunset, /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
          assert.equal(Date.parse(sunset), Date.UTC(2027, 1, 1));
          assert.equal(response.headers.get('link'), '<https://example.org/changes>; rel="deprecation"');
        }
      }
    });

    test('operations that are not deprecated carry none of them', async () => {
      const probes = [
        fetch(`${t.baseUrl}/api/agent/setup-check`, { signal: AbortSignal.timeout(5000) }),
        fetch(`${t.baseUrl}/api/agent/signup/poll`, { signal: AbortSignal.timeout(5000) }),
        fetch(`${t.baseUrl}/api/ingest/highlights/pending`, { signal: AbortSignal.timeout(5000) }),
        fetch(`${t.baseUrl}/api/agent/feedback`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
          signal: AbortSignal.timeout(5000),
        }),
      ];
      for (const response of await Promise.all(probes)) {
        assert.equal(response.headers.get('deprecation'), null, response.url);
        assert.equal(response.headers.get('sunset'), null, response.url);
        assert.doesNotMatch(response.headers.get('link') ?? '', /deprecation/, response.url);
      }
    });
  });

  describe('well-known documents', () => {
    test('/.well-known/oauth-protected-resource (RFC 9728)', async () => {
      const metadata = await getJson(t, '/.well-known/oauth-protected-resource');
      assert.equal(metadata.resource, t.baseUrl);
      assert.ok(metadata.authorization_servers.includes(t.baseUrl));
      assert.deepEqual([...metadata.scopes_supported].sort(), EVERY_SCOPE);
      assert.ok(metadata.bearer_methods_supported.includes('header'));
      // The challenge of the /api/ catch-all points here.
      const challenge = await fetch(`${t.baseUrl}/api/no-such-thing`, { signal: AbortSignal.timeout(5000) });
      const pointer = /resource_metadata="([^"]+)"/.exec(challenge.headers.get('www-authenticate') ?? '');
      assert.equal(pointer?.[1], `${t.baseUrl}/.well-known/oauth-protected-resource`);
    });

    test('/.well-known/oauth-authorization-server (RFC 8414) names working device-flow endpoints', async () => {
      const metadata = await getJson(t, '/.well-known/oauth-authorization-server');
      assert.equal(metadata.issuer, t.baseUrl, 'the issuer is the URL the metadata is served under');
      assert.ok(metadata.grant_types_supported.includes(DEVICE_GRANT));
      assert.deepEqual([...metadata.scopes_supported].sort(), EVERY_SCOPE);
      assert.ok(metadata.device_authorization_endpoint.startsWith(`${t.baseUrl}/`));
      assert.ok(metadata.token_endpoint.startsWith(`${t.baseUrl}/`));

      const form = { 'content-type': 'application/x-www-form-urlencoded' };
      const started = await fetch(metadata.device_authorization_endpoint, {
        method: 'POST',
        headers: form,
        body: 'scope=read:public&client_id=openapi-test',
        signal: AbortSignal.timeout(5000),
      });
      assert.equal(started.status, 200);
      const grant = (await started.json()) as { device_code: string; verification_uri: string };
      assert.ok(grant.verification_uri.startsWith(t.baseUrl));
      const token = await fetch(metadata.token_endpoint, {
        method: 'POST',
        headers: form,
        body: new URLSearchParams({ grant_type: DEVICE_GRANT, device_code: grant.device_code }).toString(),
        signal: AbortSignal.timeout(5000),
      });
      assert.equal(token.status, 400);
      assert.equal(((await token.json()) as { error: string }).error, 'authorization_pending');
    });

    test('/.well-known/mcp.json and /llms.txt are served from the registry (tools, public tools, links)', async () => {
      const mcp = await getJson(t, '/.well-known/mcp.json');
      const published = mcp._meta['io.modelcontextprotocol.registry/publisher-provided'];
      const tools = [...OPERATIONS, legacyEcho].filter((op) => op.mcpTool);
      assert.deepEqual(
        published.tools,
        tools.map((op) => op.mcpTool),
      );
      assert.equal(mcp.remotes[0].url, `${t.baseUrl}/api/mcp`);
      assert.deepEqual(
        [...published.public_tools].sort(),
        tools
          .filter((op) => op.credential === 'public' || op.credential === 'optional_bearer')
          .map((op) => op.mcpTool)
          .sort(),
      );
      const llms = await fetch(`${t.baseUrl}/llms.txt`, { signal: AbortSignal.timeout(5000) });
      assert.equal(llms.status, 200);
      const text = await llms.text();
      for (const path of ['/openapi.json', '/docs', '/.well-known/mcp.json', '/.well-known/agent-card.json'])
        assert.ok(text.includes(`${t.baseUrl}${path}`), path);
    });

    test('/.well-known/ai-agent.json: scope catalog with lowest tiers, tiers, rate limits, feedback', async () => {
      const agent = await getJson(t, '/.well-known/ai-agent.json');
      assert.equal(agent.version, '2026-07-16');
      assert.equal(agent.api.openapi, `${t.baseUrl}/openapi.json`);

      const catalog = agent.auth.scopes as { scope: string; description: string; tier: string | null }[];
      assert.deepEqual(catalog.map((s) => s.scope).sort(), EVERY_SCOPE);
      const lowest = lowestTiers(t.deps.tiers.tiers);
      for (const entry of catalog) {
        assert.equal(entry.description, SCOPE_CATALOG[entry.scope as keyof typeof SCOPE_CATALOG]);
        assert.ok(entry.description.length > 0);
        assert.equal(entry.tier, lowest.get(entry.scope), entry.scope);
      }
      const tierOf = Object.fromEntries(catalog.map((s) => [s.scope, s.tier]));
      // The default ladder (reference surface §3).
      assert.equal(tierOf['read:public'], 'public');
      assert.equal(tierOf['feedback:submit'], 'public');
      assert.equal(tierOf['events:rsvp'], 'member');
      assert.equal(tierOf['directory:search'], 'resident');
      assert.equal(tierOf['research:query'], 'resident');
      assert.equal(tierOf['resources:book'], 'core');
      assert.equal(tierOf['events:submit_recap'], 'core');
      assert.equal(tierOf['admin:tier_review'], 'operator');

      assert.deepEqual(
        agent.auth.tiers.map((tier: { name: string }) => tier.name),
        ['public', 'member', 'resident', 'core', 'operator'],
      );
      const selfRequestable = agent.auth.tiers
        .filter((tier: { self_requestable: boolean }) => tier.self_requestable)
        .map((tier: { name: string }) => tier.name);
      assert.deepEqual(selfRequestable, ['member', 'resident', 'core']);

      const limits = agent.rate_limits as { name: string; limit: number; window: string; per: string }[];
      const limit = (name: string) => limits.find((l) => l.name === name);
      assert.deepEqual(limit('anonymous'), { name: 'anonymous', limit: 120, window: '60s', per: 'ip' });
      assert.deepEqual(limit('signup_start'), {
        name: 'signup_start',
        limit: 30,
        window: '3600s',
        per: 'ip',
      });
      assert.deepEqual(limit('feedback'), { name: 'feedback', limit: 10, window: '3600s', per: 'ip' });
      assert.deepEqual(limit('highlights'), {
        name: 'highlights',
        limit: 3,
        window: 'utc_day',
        per: 'token',
      });
      for (const op of OPERATIONS) {
        for (const policy of [...(op.rateLimits?.(t.deps) ?? []), ...(op.quotas?.(t.deps) ?? [])]) {
          assert.equal(limit(policy.name)?.limit, policy.limit, `${op.id} policy ${policy.name}`);
        }
      }

      assert.equal(agent.feedback.url, `${t.baseUrl}/api/agent/feedback`);
      assert.equal(agent.feedback.method, 'POST');
      assert.deepEqual(
        [...agent.feedback.categories].sort(),
        [
          'broken_url',
          'schema_mismatch',
          'stale_doc',
          'endpoint_404',
          'bug_report',
          'other',
          'feature_request',
          'praise',
          'complaint',
          'question',
          'suggestion',
        ].sort(),
      );
      const filed = await fetch(agent.feedback.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          message: 'Filed through the URL that ai-agent.json advertises.',
          kind: 'other',
        }),
        signal: AbortSignal.timeout(5000),
      });
      assert.equal(filed.status, 201);
    });

    test("an operator's tier ladder is what the catalog reports", async () => {
      const dir = mkdtempSync(join(tmpdir(), 'agent-commons-tiers-'));
      const file = join(dir, 'tiers.json');
      const ladder = [
        { name: 'guest', adds: ['read:public', 'feedback:submit'], selfRequestable: false },
        { name: 'regular', adds: ['events:rsvp', 'resources:book'], selfRequestable: true },
      ];
      writeFileSync(file, JSON.stringify(ladder));
      const custom = await startTestApp({ config: { tiersFile: file } });
      try {
        const agent = await getJson(custom, '/.well-known/ai-agent.json');
        const tierOf = Object.fromEntries(
          agent.auth.scopes.map((s: { scope: string; tier: string | null }) => [s.scope, s.tier]),
        );
        assert.equal(tierOf['read:public'], 'guest');
        assert.equal(tierOf['resources:book'], 'regular');
        assert.equal(tierOf['events:rsvp'], 'regular');
        assert.equal(tierOf['directory:search'], null, 'no tier grants it');
        assert.deepEqual(
          agent.auth.tiers.map((tier: { name: string }) => tier.name),
          ['guest', 'regular'],
        );
      } finally {
        await custom.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});

/** The security requirement a credential kind implies (spec §5), checked against the document. */
function checkSecurity(op: Operation, security: Record<string, string[]>[]): void {
  const scopes = op.scope ? [op.scope] : [];
  const anonymous = security.some((requirement) => Object.keys(requirement).length === 0);
  const bearer = security.find((requirement) => 'agentBearer' in requirement);
  const session = security.find((requirement) => 'browserSession' in requirement);
  const about = `${op.id} (${op.credential}): ${JSON.stringify(security)}`;
  switch (op.credential) {
    case 'public':
      assert.ok(anonymous, about);
      assert.ok(!session, about);
      if (bearer) assert.deepEqual(bearer.agentBearer, [], about);
      break;
    case 'optional_bearer':
      assert.ok(anonymous, about);
      assert.deepEqual(bearer?.agentBearer, scopes, about);
      assert.ok(!session, about);
      break;
    case 'bearer':
      assert.deepEqual(security, [{ agentBearer: scopes }], about);
      break;
    case 'session':
      assert.deepEqual(security, [{ browserSession: [] }], about);
      break;
    case 'bearer_or_session':
      assert.ok(!anonymous, about);
      assert.deepEqual(bearer, { agentBearer: scopes }, about);
      assert.deepEqual(session, { browserSession: [] }, about);
      break;
  }
}

/** A body operation documents a JSON request body; a query operation documents its parameters. */
function checkInput(op: Operation, described: any): void {
  const schema = op.input as unknown as { properties?: Record<string, unknown>; required?: string[] };
  const names = Object.keys(schema.properties ?? {}).sort();
  const queryParameters = (described.parameters ?? []).filter((p: { in: string }) => p.in === 'query');
  if (op.inputFrom === 'body') {
    assert.deepEqual(queryParameters, [], `${op.id} takes no query parameters`);
    if (names.length === 0) {
      // "No body" (token revoke): nothing to describe, and nothing required.
      assert.ok(!described.requestBody?.required, `${op.id} must not require a body`);
    } else {
      const body = described.requestBody;
      assert.ok(body, `${op.id} has no requestBody`);
      assert.equal(body.required, true);
      const documented = body.content['application/json'].schema;
      assert.deepEqual(Object.keys(documented.properties).sort(), names);
      // OpenAPI is written for agents: what only a browser session may leave out is required too.
      const required = new Set([...(schema.required ?? []), ...(op.agentRequired ?? [])]);
      assert.deepEqual([...(documented.required ?? [])].sort(), [...required].sort());
    }
  } else {
    assert.equal(described.requestBody, undefined, `${op.id} takes no body`);
    assert.deepEqual(queryParameters.map((p: { name: string }) => p.name).sort(), names);
    for (const parameter of queryParameters) {
      assert.equal(parameter.required, schema.required?.includes(parameter.name) ?? false, parameter.name);
      assert.ok(parameter.schema, `${op.id} ?${parameter.name} has a schema`);
    }
  }
  const idempotencyKey = (described.parameters ?? []).find(
    (p: { in: string; name: string }) => p.in === 'header' && p.name === 'Idempotency-Key',
  );
  if (op.idempotent) {
    assert.ok(idempotencyKey, `${op.id} documents Idempotency-Key`);
    assert.equal(idempotencyKey.schema.maxLength, 255);
  } else {
    assert.equal(idempotencyKey, undefined, `${op.id} does not take Idempotency-Key`);
  }
}
