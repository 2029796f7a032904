// Calibration: Fastify answering a fixed body and headers the size of setup-check's, doing no work.
// The distance from node:http hello to this row is the framework's; from this row to the bearer
// read is ours.
import Fastify from 'fastify';
import { headers, setupCheck, upcoming, upcomingHeaders } from './floor-payloads.mjs';

const app = Fastify({ logger: false });
app.get('/', async (_request, reply) => {
  reply.headers(headers);
  return setupCheck;
});
// The bearer read's answer as the service sends it: serialized once, kept, sent as text.
const setupCheckText = JSON.stringify(setupCheck);
app.get('/setup-check', async (_request, reply) => {
  reply.headers(headers);
  return reply.type('application/json; charset=utf-8').send(setupCheckText);
});
app.get('/upcoming', async (_request, reply) => {
  reply.headers(upcomingHeaders);
  return reply.type('application/json; charset=utf-8').send(upcoming);
});
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
// PORT=0 (the bench's): the port listen(0) gave is printed for bench/support.ts to read.
process.stdout.write(`listening on http://127.0.0.1:${app.server.address().port}\n`);
