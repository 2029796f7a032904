import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';

// The same input on REST and on MCP gives the same body (ids and timestamps aside) and the same
// refusals: both surfaces run one pipeline, and this checks nothing drifts in the MCP adapter.

const HIGHLIGHTS = '/api/ingest/highlights/pending';
const FEEDBACK = '/api/agent/feedback';

async function mcpTool(t: TestApp, name: string, args: Record<string, unknown>, token?: string) {
  const headers: Record<string, string> = {
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
  };
  if (token) headers.authorization = `Bearer ${token}`;
  const message = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } };
  const response = await fetch(`${t.baseUrl}/api/mcp`, {
    method: 'POST',
    headers,
    body: JSON.stringify(message),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}

/** A wire body without what differs on every call. */
const BAD_TOKEN = 'agt_not-a-real-token';

function stable(body: Record<string, unknown>, volatile: string[] = []) {
  const copy: Record<string, unknown> = { ...body };
  for (const key of ['request_id', ...volatile]) delete copy[key];
  return copy;
}

for (const engine of engines) {
  describe(`REST and MCP conformance (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine: engine.name, limits: { feedbackPerHour: 100 } });
    });
    after(() => t?.close());
    async function tokenWith(scopes: string[]) {
      return t.token(await t.member('core'), scopes);
    }

    /** REST's status and body beside MCP's, for one operation and input. */
    async function both(
      tool: string,
      rest: () => Promise<{ status: number; body: any }>,
      args: object,
      token?: string,
    ) {
      const viaRest = await rest();
      const viaMcp = await mcpTool(t, tool, args as Record<string, unknown>, token);
      const result = viaMcp.body.result;
      return { viaRest, viaMcp, result, mcpBody: result?.structuredContent as Record<string, unknown> };
    }

    /**
     * A bad bearer is read as REST reads it (docs/decisions.md, "A bad bearer on a public call"): no
     * bearer on an optional-bearer tool, a 401 with error="invalid_token" on a member tool (the result
     * in-band, the challenge on the HTTP answer).
     */
    async function badTokenOnMcp(tool: string, args: object, expected: 'refused' | 'anonymous') {
      const viaMcp = await mcpTool(t, tool, args as Record<string, unknown>, BAD_TOKEN);
      if (expected === 'anonymous') {
        assert.equal(viaMcp.status, 200);
        assert.equal(viaMcp.body.result.isError, undefined);
        return;
      }
      assert.equal(viaMcp.status, 401);
      assert.match(viaMcp.headers.get('www-authenticate') ?? '', /^Bearer error="invalid_token"/);
      assert.equal(viaMcp.body.result.isError, true);
      assert.equal(viaMcp.body.result.structuredContent.error, 'invalid_token');
    }

    test('ic_highlights_status', async () => {
      const token = await tokenWith(['events:submit_recap']);
      const queued = { id: `2026-07-16-status-${Math.random().toString(36).slice(2, 8)}`, dek: 'Queued.' };
      await t.call('POST', HIGHLIGHTS, { token, body: queued });
      const cases: [Record<string, unknown>, string | undefined, number][] = [
        [{ id: queued.id }, token, 200],
        [{}, token, 200],
        [{ id: 'no-such-story' }, token, 404],
        [{ id: '' }, token, 400],
        [{ colour: 'blue' }, token, 400],
        [{ id: queued.id }, undefined, 401],
      ];
      await badTokenOnMcp('ic_highlights_status', { id: queued.id }, 'refused');
      for (const [args, bearer, status] of cases) {
        const query = new URLSearchParams(args as Record<string, string>).toString();
        const { viaRest, viaMcp, result, mcpBody } = await both(
          'ic_highlights_status',
          () => t.call('GET', query ? `${HIGHLIGHTS}?${query}` : HIGHLIGHTS, { token: bearer }),
          args,
          bearer,
        );
        const label = JSON.stringify(args);
        assert.equal(viaRest.status, status, label);
        assert.equal(result.isError === true, status >= 400, label);
        assert.equal(viaMcp.status, status === 401 ? 401 : 200, label);
        const expected = status >= 400 ? { ok: false, ...viaRest.body } : viaRest.body;
        assert.deepEqual(stable(mcpBody), stable(expected), label);
      }
    });

    test('ic_feedback_submit', async () => {
      const token = await tokenWith(['feedback:submit']);
      const cases: [Record<string, unknown>, string | undefined, number][] = [
        [{ message: 'Same on both surfaces.', kind: 'broken_url', colour: 'blue' }, token, 201],
        [{ message: 'Anonymous report.' }, undefined, 201],
        [{ message: '' }, undefined, 400],
        [{ message: 'Odd class.', category: 'nonsense' }, token, 400],
      ];
      const anonymous = await t.call('POST', FEEDBACK, {
        token: BAD_TOKEN,
        body: { message: 'Bad bearer on REST.' },
      });
      assert.equal(anonymous.status, 201, 'REST: a bad bearer on an optional-bearer operation is no bearer');
      await badTokenOnMcp('ic_feedback_submit', { message: 'Bad bearer on MCP.' }, 'anonymous');
      for (const [args, bearer, status] of cases) {
        const { viaRest, mcpBody } = await both(
          'ic_feedback_submit',
          () => t.call('POST', FEEDBACK, { token: bearer, body: args }),
          args,
          bearer,
        );
        const label = JSON.stringify(args);
        assert.equal(viaRest.status, status, label);
        const expected = status >= 400 ? { ok: false, ...viaRest.body } : viaRest.body;
        assert.deepEqual(stable(mcpBody, ['ticket_id']), stable(expected, ['ticket_id']), label);
      }
    });
  });
}
