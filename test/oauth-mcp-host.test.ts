import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser } from 'playwright-core';
import { sha256 } from '../src/secrets.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { outboxPath } from './support/browser.ts';
import { launchChromium, skipWithoutChromium } from './support/chromium.ts';
import { engines } from './support/databases.ts';
import { InMemoryOAuthHost, loopbackRedirect } from './support/mcp-oauth-host.ts';

const ARTIFACTS = 'test-artifacts';

for (const engine of engines) {
  describe(`an MCP host connects with nothing but the URL: SDK OAuth provider, member approves in Chromium (${engine.name})`, {
    skip: engine.skip || skipWithoutChromium,
  }, () => {
    let t: TestApp;
    let browser: Browser;
    before(async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      t = await startTestApp({ engine: engine.name });
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
      await t?.close();
    });

    test('discovery, registration, sign-in and consent in the browser, code exchange, then member tools on MCP, REST and A2A', async () => {
      const member = await t.member('member', 'Mina');
      const redirect = await loopbackRedirect();
      const host = new InMemoryOAuthHost(redirect.url);
      const mcpUrl = new URL(`${t.baseUrl}/api/mcp`);
      const client = new Client({ name: 'desktop-host', version: '1.0.0' });
      const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: host });
      try {
        // No token yet: initialize and public tools work; the first member tool gets the 401 and
        // the SDK discovers, registers and sends the member's browser to the authorization endpoint.
        await client.connect(transport);
        await assert.rejects(
          client.callTool({ name: 'ic_get_my_membership', arguments: {} }),
          (error) => error instanceof UnauthorizedError,
        );
        const registered = host.clientInformation();
        assert.match(registered?.client_id ?? '', /^mcpc_/);
        const authorizationUrl = host.authorizationUrl;
        assert.ok(authorizationUrl, 'the SDK asked for the browser step');
        assert.equal(authorizationUrl.origin + authorizationUrl.pathname, `${t.baseUrl}/oauth/authorize`);
        assert.equal(authorizationUrl.searchParams.get('resource'), mcpUrl.toString());
        assert.equal(authorizationUrl.searchParams.get('code_challenge_method'), 'S256');

        const page = await browser.newPage();
        await page.goto(authorizationUrl.toString());
        await page.getByRole('heading', { name: 'Sign in first' }).waitFor();
        await page.getByRole('main').getByRole('link', { name: 'Sign in' }).click();
        await page.getByLabel('Email address').fill(member.email);
        await page.getByRole('button', { name: 'Send me a link' }).click();
        await page.getByText('Check your mail').waitFor();
        await page.goto(`${t.baseUrl}${outboxPath(t.deps)}`);
        const link = (await page.locator('pre').first().textContent())?.match(/http\S+/)?.[0];
        assert.ok(link);
        // The browser that asked opens the link: signed in and on the consent page in one step.
        await page.goto(link);
        await page.getByRole('heading', { name: 'An application asks to act for you' }).waitFor();
        assert.equal(await page.locator('#client-name').textContent(), 'Desktop host (SDK)');
        assert.equal(await page.locator('#redirect-host').textContent(), new URL(redirect.url).host);
        assert.ok((await page.locator('#denied code').allTextContents()).includes('admin:tier_review'));
        await page.screenshot({ path: `${ARTIFACTS}/oauth-consent-${engine.name}.png`, fullPage: true });
        await page.getByRole('button', { name: 'Approve' }).click();
        const back = await redirect.received;
        await page.getByText('Done: you can close this window').waitFor();
        await page.close();
        assert.equal(back.get('state'), host.state());
        assert.equal(back.get('iss'), t.baseUrl);
        const code = back.get('code');
        assert.ok(code);

        await transport.finishAuth(code);
        const token = host.tokens()?.access_token ?? '';
        assert.match(token, /^agt_/);
        assert.equal(host.tokens()?.scope, t.deps.tiers.scopesOf('member').join(' '), 'what the tier grants');
        const result = await client.callTool({ name: 'ic_get_my_membership', arguments: {} });
        assert.equal(result.isError, undefined, JSON.stringify(result));
        assert.equal((result.structuredContent as { member_id?: string }).member_id ?? member.id, member.id);
        const stored = await t.deps.db
          .selectFrom('tokens')
          .selectAll()
          .where('hash', '=', sha256(token))
          .executeTakeFirstOrThrow();
        assert.equal(stored.source, 'oauth');
        assert.equal(stored.name, 'Desktop host (SDK)');

        const rest = await t.call('GET', '/api/activity/me', { token });
        assert.equal(rest.status, 200, rest.text);
        const a2a = await t.call('POST', '/api/a2a', {
          token,
          body: {
            jsonrpc: '2.0',
            id: 1,
            method: 'tasks/send',
            params: { capability: 'ic_get_my_membership', arguments: {} },
          },
        });
        assert.equal(a2a.body.error, undefined, a2a.text);

        // Revoked (here by the agent itself): the next member tool is a 401 with the challenge (a
        // bad token on initialize and public tools is read as none, as on REST and A2A).
        assert.equal((await t.call('POST', '/api/agent/token/revoke', { token, body: {} })).status, 200);
        const again = await fetch(mcpUrl, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            accept: 'application/json, text/event-stream',
            'content-type': 'application/json',
            'mcp-protocol-version': '2025-06-18',
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { name: 'ic_get_my_membership', arguments: {} },
          }),
        });
        assert.equal(again.status, 401);
        assert.match(
          again.headers.get('www-authenticate') ?? '',
          new RegExp(
            `error="invalid_token".*resource_metadata="${t.baseUrl}/.well-known/oauth-protected-resource/api/mcp"`,
          ),
        );
      } finally {
        await client.close();
        await redirect.close();
      }
    });
  });
}
