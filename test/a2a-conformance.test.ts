import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { setMemberTier } from '../src/domain/members/members.ts';
import { OPERATIONS } from '../src/operations/registry.ts';
import { isRestOperation, type RestOperation } from '../src/operations/types.ts';
import { BAD_TOKEN } from './support/a2a.ts';
import { type CallResponse, startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';

/** The JSON-RPC code each REST refusal status becomes (docs/a2a.md): -32602 for invalid input, else -31000 minus the status. */
const CODE_FOR_STATUS: Record<number, number> = {
  400: -32602,
  401: -31401,
  403: -31403,
  404: -31404,
  409: -31409,
  413: -31413,
  422: -31422,
  429: -31429,
};

/** Fields that differ between two calls by design: per-request ids and the time a ticket was filed. */
function comparable(body: unknown): unknown {
  const { request_id: _r, ticket_id: _t, received_at: _at, ...rest } = body as Record<string, unknown>;
  return rest;
}

const operation = (tool: string): RestOperation => {
  const op = OPERATIONS.filter(isRestOperation).find((o) => o.mcpTool === tool);
  assert.ok(op, tool);
  return op;
};

for (const engine of engines) {
  describe(`A2A conformance with REST (${engine.name})`, { skip: engine.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine: engine.name, limits: { feedbackPerHour: 30 } });
    });
    after(() => t?.close());

    function rest(op: RestOperation, input: Record<string, string>, token?: string): Promise<CallResponse> {
      if (op.inputFrom === 'body') return t.call(op.method, op.path, { body: input, token });
      const query = new URLSearchParams(input).toString();
      return t.call(op.method, query ? `${op.path}?${query}` : op.path, { token });
    }
    const a2a = (capability: string, args: unknown, token?: string) =>
      t.call('POST', '/api/a2a', {
        body: { jsonrpc: '2.0', id: 1, method: 'tasks/send', params: { capability, arguments: args } },
        token,
      });

    /** One input on both surfaces: the same body on success, the same Error body and class on refusal. */
    async function assertSame(tool: string, input: Record<string, string>, token?: string) {
      const label = `${tool} ${JSON.stringify(input)} ${token ? token.slice(0, 8) : 'anonymous'}`;
      const viaRest = await rest(operation(tool), input, token);
      const viaA2a = await a2a(tool, input, token);
      // A refused credential is an HTTP 401 on A2A too; every other answer is 200 with a JSON-RPC body.
      assert.equal(viaA2a.status, viaRest.status === 401 ? 401 : 200, `${label}: ${viaA2a.text}`);
      if (viaRest.status < 400) {
        assert.equal(viaA2a.body.error, undefined, `${label}: REST ${viaRest.status}, A2A ${viaA2a.text}`);
        assert.deepEqual(comparable(viaA2a.body.result), comparable(viaRest.body), label);
      } else {
        assert.ok(viaA2a.body.error, `${label}: REST ${viaRest.status}, A2A ${viaA2a.text}`);
        assert.equal(viaA2a.body.error.code, CODE_FOR_STATUS[viaRest.status], `${label}: ${viaRest.text}`);
        assert.deepEqual(comparable(viaA2a.body.error.data), comparable(viaRest.body), label);
      }
      return viaRest.status;
    }

    test('ic_highlights_status: same answers and refusals on REST and A2A', async () => {
      const member = await t.member('core');
      const token = await t.token(member, ['events:submit_recap']);
      const storyId = `2026-07-16-conformance-${randomUUID().slice(0, 8)}`;
      const submitted = await t.call('POST', '/api/ingest/highlights/pending', {
        token,
        body: { id: storyId, dek: 'Conformance check.' },
      });
      assert.equal(submitted.status, 202, submitted.text);
      const revoked = await t.token(member, ['events:submit_recap']);
      assert.equal(
        (await t.call('POST', '/api/agent/token/revoke', { token: revoked, body: {} })).status,
        200,
      );
      const sandbox = await t.token(member, ['events:submit_recap'], { sandbox: true });

      const statuses = [
        await assertSame('ic_highlights_status', {}),
        await assertSame('ic_highlights_status', {}, BAD_TOKEN),
        await assertSame('ic_highlights_status', {}, revoked),
        await assertSame('ic_highlights_status', {}, token),
        await assertSame('ic_highlights_status', { id: storyId }, token),
        await assertSame('ic_highlights_status', { id: storyId }, sandbox),
        await assertSame('ic_highlights_status', { id: 'never-submitted' }, token),
        await assertSame('ic_highlights_status', { id: '' }, token),
        await assertSame('ic_highlights_status', { unknown: 'x' }, token),
      ];
      assert.deepEqual(statuses, [401, 401, 401, 200, 200, 200, 404, 400, 400]);
    });

    test('ic_feedback_submit: same answers and refusals on REST and A2A, up to the per-IP limit', async () => {
      const member = await t.member('core');
      const scoped = await t.token(member, ['feedback:submit']);
      const unscoped = await t.token(member, ['read:public']);
      const statuses = [
        await assertSame('ic_feedback_submit', { message: 'anonymous report' }),
        await assertSame('ic_feedback_submit', { message: 'attributed', kind: 'stale_doc' }, scoped),
        await assertSame('ic_feedback_submit', { message: 'no scope', extra: 'kept' }, unscoped),
        await assertSame('ic_feedback_submit', { message: 'bad bearer' }, BAD_TOKEN),
        await assertSame('ic_feedback_submit', {}),
        await assertSame('ic_feedback_submit', { message: '   ' }),
        await assertSame('ic_feedback_submit', { message: 'x', category: 'nope' }, scoped),
        await assertSame('ic_feedback_submit', { message: 'x', priority: 'urgent' }),
      ];
      assert.deepEqual(statuses, [201, 201, 201, 201, 400, 400, 400, 400]);

      // Both surfaces spend the same per-IP allowance: exhaust it on REST, then both refuse alike.
      let last: CallResponse | undefined;
      for (let i = 0; i < 40 && last?.status !== 429; i++) {
        last = await t.call('POST', '/api/agent/feedback', { body: { message: 'filler' } });
      }
      assert.equal(last?.status, 429, last?.text);
      assert.equal(await assertSame('ic_feedback_submit', { message: 'over the limit' }), 429);
    });

    test('ic_highlights_submit: same scope and live-tier refusals on REST and A2A', async () => {
      const member = await t.member('core');
      const token = await t.token(member, ['events:submit_recap']);
      const unscoped = await t.token(member, ['read:public']);
      // The same story twice: REST files it, A2A refreshes it, and both answer the same receipt.
      const sent = { id: `2026-07-16-tier-${randomUUID().slice(0, 8)}`, dek: 'Tier check.' };
      const statuses = [
        await assertSame('ic_highlights_submit', sent),
        await assertSame('ic_highlights_submit', sent, unscoped),
        await assertSame('ic_highlights_submit', sent, token),
        await assertSame('ic_highlights_submit', { ...sent, event_url: 'not a url' }, token),
      ];
      await setMemberTier(t.deps.db, t.clock, t.deps.tiers, member.id, 'member');
      statuses.push(await assertSame('ic_highlights_submit', sent, token));
      assert.deepEqual(statuses, [401, 403, 202, 400, 403]);
    });
  });
}
