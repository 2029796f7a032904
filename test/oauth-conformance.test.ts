import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { freePort, startTestApp, type TestApp } from './support/app.ts';
import { type Browser, signInThroughOutbox } from './support/browser.ts';
import { startLocalHttps } from './support/local-https.ts';
import { registerClient } from './support/oauth-client.ts';
import { ROOT } from './support/processes.ts';

/**
 * The official MCP conformance suite's authorization-server scenarios (`conformance authorization`,
 * @modelcontextprotocol/conformance as pinned in package.json) against /oauth/* on a real port:
 * `authorization-server-metadata-endpoint` and `authorization-code-grant`, once with a client whose
 * client_id is its metadata document (served over HTTPS) and once with a client from /oauth/register,
 * at revision 2026-07-28 (whose checks include 2025-11-25's client ID metadata document support).
 * The suite prints the authorization URL for a person to open; here the member's signed-in browser
 * opens it, approves, and follows the redirect to the suite's callback listener.
 */
const CLI = join(
  dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/package.json')),
  'dist/index.js',
);

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO';
  errorMessage?: string;
}

function checksUnder(dir: string): Check[] {
  const found: Check[] = [];
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true }))
    if (entry.isFile() && entry.name === 'checks.json')
      found.push(...(JSON.parse(readFileSync(join(entry.parentPath, entry.name), 'utf8')) as Check[]));
  return found;
}

/** Runs the suite for this client, approving in `browser` when it asks; answers every check it wrote. */
async function runSuite(t: TestApp, browser: Browser, clientId: string, port: number) {
  const output = mkdtempSync(join(tmpdir(), 'oauth-conformance-'));
  try {
    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    delete env.NODE_TEST_CONTEXT;
    const child = spawn(
      process.execPath,
      [
        CLI,
        'authorization',
        '--url',
        t.baseUrl,
        '--client-id',
        clientId,
        '-p',
        String(port),
        '-o',
        output,
        '--spec-version',
        '2026-07-28',
      ],
      { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    // The suite asks to authorize and starts its callback listener side by side: the redirect is
    // followed only once it says the listener is up, or the browser can reach the port first.
    const lookers = new Set<() => void>();
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      for (const look of lookers) look();
    });
    const printed = (what: string, find: (line: string) => boolean) =>
      new Promise<string>((resolve, reject) => {
        const look = () => {
          const line = stdout.split('\n').find(find);
          if (!line) return;
          lookers.delete(look);
          resolve(line.trim());
        };
        lookers.add(look);
        look();
        exited.then(() => reject(new Error(`the suite ended without ${what}:\n${stdout}\n${stderr}`)));
      });
    const listening = printed('starting its callback listener', (line) =>
      line.startsWith(`Callback server started: http://127.0.0.1:${port}`),
    );
    listening.catch(() => undefined); // awaited below; a failure before then is the test's own
    const authorizationUrl = await printed('asking to authorize', (line) =>
      line.startsWith(`${t.baseUrl}/oauth/authorize?`),
    );
    const url = new URL(authorizationUrl);
    const started = await browser.request('GET', url.pathname + url.search);
    assert.equal(started.status, 303, started.text);
    const secret = new URL(started.headers.get('location')!, t.baseUrl).searchParams.get('request')!;
    const decided = await browser.request('POST', '/oauth/consent', {
      request: secret,
      decision: 'approve',
      csrf: browser.csrf,
    });
    assert.equal(decided.status, 303, decided.text);
    const callback = decided.headers.get('location')!;
    assert.ok(callback.startsWith(`http://127.0.0.1:${port}/callback?`), callback);
    await listening;
    assert.equal((await fetch(callback)).status, 200);
    const code = await exited;
    return { code, stdout, stderr, checks: checksUnder(output) };
  } finally {
    rmSync(output, { recursive: true, force: true });
  }
}

describe('the MCP conformance suite, authorization server scenarios', () => {
  let t: TestApp;
  let documents: Awaited<ReturnType<typeof startLocalHttps>>;
  let callbackPort: number;
  before(async () => {
    callbackPort = await freePort();
    const redirect = `http://127.0.0.1:${callbackPort}/callback`;
    documents = await startLocalHttps((request, response) => {
      if (request.url !== '/conformance-client.json') return response.writeHead(404).end();
      response.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          client_id: `${documents.base}/conformance-client.json`,
          client_name: 'Conformance suite',
          redirect_uris: [redirect],
          token_endpoint_auth_method: 'none',
        }),
      );
    });
    t = await startTestApp({ config: { oauthClientDocumentsFromPrivateAddresses: true } });
  });
  after(async () => {
    await t?.close();
    await documents?.close();
  });

  function assertAllPass(result: Awaited<ReturnType<typeof runSuite>>) {
    const where = `${result.stdout}\n${result.stderr}`;
    const ids = result.checks.map((check) => `${check.id}:${check.status}`).sort();
    assert.deepEqual(
      ids,
      [
        'authorization-code-grant:SUCCESS',
        'authorization-server-metadata-cimd:SUCCESS',
        'authorization-server-metadata:SUCCESS',
      ],
      `${JSON.stringify(result.checks, null, 2)}\n${where}`,
    );
    assert.equal(result.code, 0, where);
  }

  test('a client ID metadata document client: every check passes', async () => {
    const member = await t.member('member');
    const browser = await signInThroughOutbox(t, member.email);
    assertAllPass(await runSuite(t, browser, `${documents.base}/conformance-client.json`, callbackPort));
  });

  test('a dynamically registered client: every check passes', async () => {
    const registered = await registerClient(t.baseUrl, {
      client_name: 'Conformance suite (registered)',
      redirect_uris: [`http://127.0.0.1:${callbackPort}/callback`],
    });
    assert.equal(registered.status, 201);
    const member = await t.member('member');
    const browser = await signInThroughOutbox(t, member.email);
    assertAllPass(await runSuite(t, browser, registered.body.client_id, callbackPort));
  });
});
