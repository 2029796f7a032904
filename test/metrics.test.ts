// Prometheus metrics: the real server, on both engines, serves them at METRICS_PATH
// and on METRICS_PORT behind METRICS_BEARER. Calls made on the wire (a direct read, a batch, MCP, a
// refused call, an idempotent replay) are counted under their operation, surface and outcome; the
// queues, the pool, the research index and the process are reported; and nothing in the answer
// names a token, a member, an e-mail address or a query.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { loadConfig } from '../src/config.ts';
import { engines, freshDatabase } from './support/databases.ts';
import { killAllChildren, runCliJson, type ServerProcess, startServer } from './support/processes.ts';

const BEARER = 'scrape-me-with-this-secret-0123';
const EMAIL = 'metrics.person@test.example';

after(killAllChildren);

/** The samples of a Prometheus text answer: `name{labels}` → value. */
function samples(text: string): Map<string, number> {
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const cut = line.lastIndexOf(' ');
    values.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return values;
}

async function scrape(url: string, bearer = BEARER) {
  const response = await fetch(url, { headers: { authorization: `Bearer ${bearer}` } });
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
}

describe('Prometheus metrics', { concurrency: true }, () => {
  for (const engine of engines) {
    test(`counted on the wire, served behind the bearer, never identifying (${engine.name})`, {
      skip: engine.skip,
    }, async () => {
      const database = await freshDatabase(engine.name);
      let server: ServerProcess | undefined;
      try {
        server = await startServer(database.url, {
          env: { METRICS_PATH: '/metrics', METRICS_BEARER: BEARER, METRICS_PORT: '0' },
        });
        const printed = /^metrics: (\S+) and (\S+) \(bearer METRICS_BEARER\)$/m.exec(server.stdout());
        assert.ok(printed, server.stdout());
        const onPort = printed[2];
        const onPath = `${server.baseUrl}/metrics`;

        for (const url of [onPath, onPort]) {
          const bare = await fetch(url);
          assert.equal(bare.status, 401, url);
          assert.match(bare.headers.get('www-authenticate') ?? '', /^Bearer/);
          assert.doesNotMatch(await bare.text(), /agent_commons_/);
          assert.equal((await scrape(url, 'not-the-bearer-at-all-000')).status, 401, url);
        }

        const member = await runCliJson(database.url, [
          'member',
          'create',
          '--email',
          EMAIL,
          '--name',
          'Mo Metrics',
          '--tier',
          'core',
        ]);
        const { token } = await runCliJson(database.url, [
          'token',
          'mint',
          '--member',
          member.id,
          '--scopes',
          'events:submit_recap',
        ]);
        const base = server.baseUrl;
        for (let i = 0; i < 3; i++)
          assert.equal((await fetch(`${base}/api/events/upcoming?limit=2`)).status, 200);
        assert.equal((await fetch(`${base}/api/events/upcoming?limit=secret-query-text`)).status, 400);
        const batch = await fetch(`${base}/api/batch`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            requests: [
              { id: 'a', method: 'GET', path: '/api/events/upcoming?limit=1' },
              { id: 'b', method: 'GET', path: '/api/events/upcoming?limit=2' },
            ],
          }),
        });
        assert.equal(batch.status, 200, await batch.text());
        const submit = (bearer: string) =>
          fetch(`${base}/api/ingest/highlights/pending`, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${bearer}`,
              'content-type': 'application/json',
              'idempotency-key': 'metrics-key-1',
            },
            body: JSON.stringify({ id: '2026-07-16-metrics-story', event_title: 'Metrics night' }),
          });
        assert.equal((await submit(token)).status, 202);
        const replay = await submit(token);
        assert.equal(replay.status, 202);
        assert.equal(replay.headers.get('idempotent-replayed'), 'true');
        assert.equal((await submit('agt_not-a-real-token')).status, 401);
        const mcp = await fetch(`${base}/api/mcp`, {
          method: 'POST',
          headers: {
            accept: 'application/json, text/event-stream',
            'content-type': 'application/json',
            'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { name: 'ic_health', arguments: {} },
          }),
        });
        assert.equal(mcp.status, 200);

        // The research index is built in the background at start.
        let answer = await scrape(onPath);
        for (
          let i = 0;
          i < 50 && !(samples(answer.text).get('agent_commons_research_index_passages')! > 0);
          i++
        ) {
          await new Promise((resolve) => setTimeout(resolve, 200));
          answer = await scrape(onPath);
        }
        assert.equal(answer.status, 200);
        assert.equal(answer.type, 'text/plain; version=0.0.4; charset=utf-8');
        const got = samples(answer.text);
        const value = (key: string) => {
          assert.ok(got.has(key), `${key} in\n${answer.text.slice(0, 4000)}`);
          return got.get(key)!;
        };
        assert.equal(
          value('agent_commons_requests_total{operation="listUpcomingEvents",surface="rest",outcome="ok"}'),
          3,
        );
        assert.equal(
          value(
            'agent_commons_requests_total{operation="listUpcomingEvents",surface="rest",outcome="refused"}',
          ),
          1,
        );
        assert.equal(
          value('agent_commons_requests_total{operation="listUpcomingEvents",surface="batch",outcome="ok"}'),
          2,
        );
        assert.equal(
          value('agent_commons_requests_total{operation="batchPublicReads",surface="rest",outcome="ok"}'),
          1,
        );
        assert.equal(
          value('agent_commons_requests_total{operation="submitHighlight",surface="rest",outcome="ok"}'),
          2,
        );
        assert.equal(
          value('agent_commons_requests_total{operation="submitHighlight",surface="rest",outcome="refused"}'),
          1,
        );
        assert.equal(
          value('agent_commons_requests_total{operation="agentHealth",surface="mcp",outcome="ok"}'),
          1,
        );
        assert.equal(value('agent_commons_refusals_total{surface="rest",kind="validation"}'), 1);
        assert.equal(value('agent_commons_refusals_total{surface="rest",kind="unauthorized"}'), 1);
        assert.equal(value('agent_commons_idempotency_replays_total'), 1);
        assert.equal(value('agent_commons_idempotency_in_flight_conflicts_total'), 0);
        assert.equal(
          value('agent_commons_request_duration_seconds_count{operation="listUpcomingEvents"}'),
          6,
        );
        assert.equal(
          value('agent_commons_request_duration_seconds_bucket{operation="listUpcomingEvents",le="+Inf"}'),
          6,
        );
        assert.ok(value('agent_commons_request_duration_seconds_sum{operation="submitHighlight"}') > 0);
        assert.equal(value('agent_commons_queue_depth{queue="rsvps"}'), 0);
        assert.equal(value('agent_commons_queue_depth{queue="bookings"}'), 0);
        assert.equal(value('agent_commons_queue_oldest_due_age_seconds{queue="bookings"}'), 0);
        assert.ok(value('agent_commons_research_index_passages') > 0);
        assert.ok(value('agent_commons_research_index_generation') > 0);
        assert.ok(value('agent_commons_research_index_built_timestamp_seconds') > 1.7e9);
        assert.ok(value('agent_commons_process_cpu_seconds_total') > 0);
        assert.ok(value('agent_commons_nodejs_eventloop_lag_seconds') >= 0);
        if (engine.name === 'postgres') {
          assert.equal(value('agent_commons_db_pool_connections{state="max"}'), 10);
          assert.ok(value('agent_commons_db_pool_connections{state="open"}') >= 1);
        } else assert.ok(!answer.text.includes('agent_commons_db_pool_connections'));

        // The other port answers the same registry.
        const fromPort = samples((await scrape(onPort)).text);
        assert.equal(fromPort.get('agent_commons_idempotency_replays_total'), 1);

        // Nothing that identifies a caller or repeats what they asked.
        for (const secret of [
          token,
          token.slice(0, 12),
          EMAIL,
          member.id,
          'secret-query-text',
          'metrics-key-1',
          BEARER,
        ])
          assert.ok(!answer.text.includes(secret), `the metrics name ${secret}`);
      } finally {
        await server?.kill();
        await database.drop();
      }
    });
  }
});

describe('metrics settings', () => {
  test('off by default, and never reachable from another host without the bearer', () => {
    const config = loadConfig({});
    assert.equal(config.metrics.path, undefined);
    assert.equal(config.metrics.port, undefined);
    assert.throws(
      () => loadConfig({ METRICS_PATH: '/metrics' }),
      /METRICS_PATH must be set together with METRICS_BEARER/,
    );
    assert.throws(
      () => loadConfig({ METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0' }),
      /METRICS_PORT must be set together with METRICS_BEARER when METRICS_HOST is not loopback/,
    );
    assert.throws(
      () => loadConfig({ METRICS_BEARER: 'short' }),
      /METRICS_BEARER must be at least 16 characters$/,
    );
    assert.throws(
      () => loadConfig({ METRICS_PATH: 'metrics', METRICS_BEARER: BEARER }),
      /a path starting with \//,
    );
    assert.equal(loadConfig({ METRICS_PORT: '9464' }).metrics.port, 9464);
    assert.equal(
      loadConfig({ METRICS_PATH: '/ops/metrics/', METRICS_BEARER: BEARER }).metrics.path,
      '/ops/metrics',
    );
  });
});
