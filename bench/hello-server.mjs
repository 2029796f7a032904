// Baseline: the smallest useful node:http JSON server.
// Its /upcoming and /setup-check paths send the anonymous events list's and the bearer read's answers
// and headers, already serialized: the floor of node:http alone for those answers. /upcoming sends the
// events list as the string it was serialized to, which node:http encodes to UTF-8 on every request
// (the list holds one character beyond Latin-1); /upcoming-bytes sends the same bytes from a buffer
// kept once, as the service does: the stricter floor. /setup-check?work=N sends the bearer read's
// answer after N µs of busy work (bench/work-calibration.ts).
import { createServer } from 'node:http';
import { headers, setupCheck, upcoming, upcomingHeaders } from './floor-payloads.mjs';

const body = JSON.stringify({ hello: 'world' });
const upcomingReply = {
  ...upcomingHeaders,
  'content-type': 'application/json; charset=utf-8',
  'content-length': Buffer.byteLength(upcoming),
};
const upcomingBytes = Buffer.from(upcoming);
const setupCheckBody = JSON.stringify(setupCheck);
const setupCheckReply = {
  ...headers,
  'content-type': 'application/json; charset=utf-8',
  'content-length': Buffer.byteLength(setupCheckBody),
};
/** Spends `micros` of CPU, as a request's own work would (bench/work-calibration.ts). */
function busyWait(micros) {
  const until = performance.now() + micros / 1000;
  while (performance.now() < until);
}
const server = createServer((request, response) => {
  if (request.url.startsWith('/setup-check?work=')) {
    busyWait(Number(request.url.slice('/setup-check?work='.length)));
    response.writeHead(200, setupCheckReply);
    response.end(setupCheckBody);
    return;
  }
  if (request.url === '/upcoming') {
    response.writeHead(200, upcomingReply);
    response.end(upcoming);
    return;
  }
  if (request.url === '/upcoming-bytes') {
    response.writeHead(200, upcomingReply);
    response.end(upcomingBytes);
    return;
  }
  if (request.url === '/setup-check') {
    response.writeHead(200, setupCheckReply);
    response.end(setupCheckBody);
    return;
  }
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  response.end(body);
});
// PORT=0 (the bench's): the port listen(0) gave is printed for bench/support.ts to read.
server.listen(Number(process.env.PORT), '127.0.0.1', () =>
  process.stdout.write(`listening on http://127.0.0.1:${server.address().port}\n`),
);
