import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Makes `server.closeIdleConnections()` also end the connections that have not sent a request yet.
 * node counts such a connection as waiting for a request's head, not as idle, and stops enforcing
 * the head timeout once the server is closing; so one silent connection (a client's or a browser's
 * spare, opened ahead of a request it never sends) kept `server.close()` waiting until the client
 * dropped it: Fastify's close, which calls this method, and the drain's sweep, which calls it every
 * 100 ms, both waited. Nothing is lost by ending one: it carries no request, and a closing server
 * would answer the next with 503 anyway.
 */
export function closeUnusedConnectionsWithIdle(server: Server): void {
  const unused = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    unused.add(socket);
    socket.once('close', () => unused.delete(socket));
  });
  server.on('request', (request) => {
    unused.delete(request.socket);
  });
  const closeIdle = server.closeIdleConnections.bind(server);
  server.closeIdleConnections = () => {
    closeIdle();
    for (const socket of unused) socket.destroy();
    unused.clear();
  };
}
