// Calibration: Fastify answering a fixed body and headers the size of setup-check's, doing no work.
// The distance from (a) to this row is the framework's; the distance from this row to (b) is ours.
import Fastify from 'fastify';
import { headers, upcoming, upcomingHeaders } from './floor-payloads.mjs';

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
const app = Fastify({ logger: false });
app.get('/', async (_request, reply) => {
  reply.headers(headers);
  return body;
});
app.get('/upcoming', async (_request, reply) => {
  reply.headers(upcomingHeaders);
  return reply.type('application/json; charset=utf-8').send(upcoming);
});
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
// PORT=0 (the bench's): the port listen(0) gave is printed for bench/support.ts to read.
process.stdout.write(`listening on http://127.0.0.1:${app.server.address().port}\n`);
