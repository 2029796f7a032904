import type { Server } from 'node:http';
import { type ProxyTrust, rateKeyForIp } from './client.ts';

/**
 * Closes a connection as it opens when its address (an IPv6 client: its /64, as rate limits key it)
 * already holds `max` open ones, so one client cannot take every file descriptor the process has.
 * A trusted proxy's connections are not counted: they carry many clients, and the proxy caps each.
 */
export function capConnectionsPerAddress(server: Server, max: number, trust: ProxyTrust): void {
  const open = new Map<string, number>();
  server.on('connection', (socket) => {
    const address = socket.remoteAddress;
    // Gone before it was seen: nothing to count, nothing to serve.
    if (address === undefined) return void socket.destroy();
    if (trust(address, 0)) return;
    const key = rateKeyForIp(address);
    const count = open.get(key) ?? 0;
    if (count >= max) return void socket.destroy();
    open.set(key, count + 1);
    socket.once('close', () => {
      const left = (open.get(key) ?? 1) - 1;
      if (left === 0) open.delete(key);
      else open.set(key, left);
    });
  });
}
