// Calibration: Fastify answering a fixed body and headers the size of setup-check's, doing no work.
// The distance from (a) to this row is the framework's; the distance from this row to (b) is ours.
import Fastify from 'fastify';

const body = {
  ready: true,
  checks: {
    token: 'valid',
    token_prefix: 'agt_abcdef',
    scopes: ['read:public', 'events:submit_recap'],
    scopes_suspended_by_tier: [],
    member_id: 'mem_0123456789abcdef',
    member_name: 'Bench',
    tier: 'core',
    sandbox: false,
  },
  missing: [],
  next_actions: [],
  mcp: {
    url: 'http://127.0.0.1:3000/api/mcp',
    transport: 'streamable-http',
    headers: { Authorization: 'Bearer <your agt_ token>' },
    config_snippet: {
      mcpServers: {
        'agent-commons': {
          type: 'http',
          url: 'http://127.0.0.1:3000/api/mcp',
          headers: { Authorization: 'Bearer x' },
        },
      },
    },
  },
};
const headers = {
  'ratelimit-policy': '"token";q=1200;w=60',
  ratelimit: '"token";r=1199;t=45',
  'ratelimit-limit': '1200',
  'ratelimit-remaining': '1199',
  'ratelimit-reset': '45',
  'x-request-id': '6f1c2f64-5b0e-4d7e-9a51-0d7c9a1b2c3d',
  'x-content-type-options': 'nosniff',
};
// The size of scenario (f)'s answer: twenty upcoming events, already serialized.
const start = Date.parse('2026-12-01T18:00:00Z');
const upcoming = JSON.stringify({
  ok: true,
  events: Array.from({ length: 20 }, (_, i) => ({
    platform_url: `https://lu.ma/bench-${i}`,
    title: `Bench event ${i}`,
    start: new Date(start + i * 86_400_000).toISOString(),
    end: new Date(start + i * 86_400_000 + 7_200_000).toISOString(),
    location: 'Main hall',
    cover_url: null,
    description: 'An event in the benchmark’s cache.',
  })),
  count: 20,
  age_min: 0,
  stale: false,
});
const app = Fastify({ logger: false });
app.get('/', async (_request, reply) => {
  reply.headers(headers);
  return body;
});
app.get('/upcoming', async (_request, reply) => {
  reply.headers(headers);
  return reply.type('application/json; charset=utf-8').send(upcoming);
});
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
