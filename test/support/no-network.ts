// Loaded before every test file (scripts/run-tests.mjs): a TCP connection to anything but this
// machine fails at once, so a default that points at a public host (a code host, a research
// provider, an events feed) can never make a test reach the network. Unix sockets and loopback
// addresses are left alone.
import net from 'node:net';

const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/i;

function targetOf(args: unknown[]): { host: string; port: unknown } | undefined {
  // net.connect hands the socket its arguments already normalized into an array.
  const first = Array.isArray(args[0]) ? args[0][0] : args[0];
  if (typeof first === 'number' || typeof first === 'string') {
    if (typeof first === 'string' && Number.isNaN(Number(first))) return undefined; // a unix socket path
    return { host: typeof args[1] === 'string' ? args[1] : 'localhost', port: first };
  }
  if (first && typeof first === 'object') {
    const options = first as { host?: string; port?: unknown; path?: string };
    if (options.path) return undefined;
    return { host: (options.host ?? 'localhost').replace(/^\[|\]$/g, ''), port: options.port };
  }
  return undefined;
}

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function guardedConnect(this: net.Socket, ...args: unknown[]) {
  const target = targetOf(args);
  if (target && !LOOPBACK.test(target.host)) {
    const error = Object.assign(
      new Error(`outbound network is blocked in tests: ${target.host}:${String(target.port)}`),
      { code: 'ENETUNREACH' },
    );
    process.nextTick(() => this.destroy(error));
    return this;
  }
  return (connect as (...a: unknown[]) => net.Socket).apply(this, args);
} as typeof net.Socket.prototype.connect;
