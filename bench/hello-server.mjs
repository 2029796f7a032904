// Baseline: the smallest useful node:http JSON server.
import { createServer } from 'node:http';

const body = JSON.stringify({ hello: 'world' });
createServer((_request, response) => {
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  response.end(body);
}).listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('ready\n'));
