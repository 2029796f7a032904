// Who the client is behind a proxy, and how long and how many connections one client may hold open.
import { compileProxyTrust, type TrustedProxies } from '../http/client.ts';
import { durationMs, integer, refuse, type SettingText, setting } from './settings.ts';

const trustProxySpec = {
  env: 'TRUST_PROXY',
  group: 'server',
  accepts: 'comma-separated addresses and CIDRs, a hop count, or `false`',
  defaultText: '`false`',
  description:
    'The proxies whose `X-Forwarded-For` entries name the client; the client is the right-most entry ' +
    'not added by one of them, so addresses a client writes into the header never count. Name the ' +
    "proxies' addresses or ranges (`10.0.0.0/8,2001:db8::/32`; also `loopback`, `linklocal`, " +
    "`uniquelocal`), or give a hop count (`2`: the socket's peer and the entry it added are proxies), " +
    'only when nothing but the proxies can reach the instance. `true` is one hop. `false` or `0`: the ' +
    "socket's address. See [deployment](deployment.md#behind-a-reverse-proxy).",
} as const satisfies SettingText & { accepts: string; defaultText: string };

function readTrustedProxies(raw: string | undefined): TrustedProxies {
  const value = raw?.trim().toLowerCase();
  if (value === undefined || ['false', 'no', 'off'].includes(value)) return { hops: 0 };
  // Before this setting took addresses, `true` trusted every hop; one hop is what it meant behind a
  // single proxy, and a client's own entries never count with it.
  if (['true', 'yes', 'on'].includes(value)) return { hops: 1 };
  if (/^\d+$/.test(value)) return { hops: Number(value) };
  const addresses = value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  try {
    compileProxyTrust({ addresses });
  } catch {
    throw refuse(trustProxySpec, 'addresses or CIDRs separated by commas, a hop count, or false', raw);
  }
  return { addresses };
}

const requestTimeout = durationMs({
  env: 'HTTP_REQUEST_TIMEOUT_MS',
  group: 'server',
  default: 30_000,
  min: 0,
  description:
    'How long a client has to send a whole request, head and body; past it the request is answered 408 ' +
    'and its connection closed, so a client trickling a body cannot hold a connection for long. The ' +
    'time to answer does not count. `0`: no bound.',
});

const HEADERS_TIMEOUT_MS = 10_000;

const headersTimeoutText = {
  env: 'HTTP_HEADERS_TIMEOUT_MS',
  group: 'server',
  description:
    "How long a client has to send a request's head (its line and headers); past it the request is " +
    'answered 408 and its connection closed. At most `HTTP_REQUEST_TIMEOUT_MS` (unset: the shorter of ' +
    'the two). `0`: bounded by `HTTP_REQUEST_TIMEOUT_MS` only.',
} as const satisfies SettingText;

const headersTimeoutAlone = durationMs({ ...headersTimeoutText, default: HEADERS_TIMEOUT_MS, min: 0 });

const headersTimeout = setting<number, { connections: { requestTimeoutMs: number } }>(
  {
    ...headersTimeoutText,
    accepts: headersTimeoutAlone.accepts,
    defaultText: headersTimeoutAlone.defaultText,
  },
  (raw, loaded) => {
    const request = loaded.connections.requestTimeoutMs;
    // Unset, it follows a shorter request timeout down rather than refusing it.
    if (raw === undefined) return request > 0 ? Math.min(HEADERS_TIMEOUT_MS, request) : HEADERS_TIMEOUT_MS;
    const value = headersTimeoutAlone.read(raw, undefined as never);
    // node refuses to start a server whose head may take longer than the whole request.
    if (request > 0 && value > request)
      throw refuse(headersTimeoutText, `at most HTTP_REQUEST_TIMEOUT_MS (${request})`, raw);
    return value;
  },
);

export const CONNECTIONS_SCHEMA = {
  trustProxy: setting(trustProxySpec, readTrustedProxies),
  connections: {
    requestTimeoutMs: requestTimeout,
    headersTimeoutMs: headersTimeout,
    keepAliveTimeoutMs: durationMs({
      env: 'HTTP_KEEP_ALIVE_TIMEOUT_MS',
      group: 'server',
      default: 72_000,
      min: 1,
      description:
        'How long an idle keep-alive connection stays open for its next request. Keep the upstream ' +
        'idle timeout of a proxy in front below it, so the proxy never reuses a connection the service ' +
        'is closing. See [deployment](deployment.md#behind-a-reverse-proxy).',
    }),
    maxPerAddress: integer({
      env: 'HTTP_MAX_CONNECTIONS_PER_ADDRESS',
      group: 'server',
      default: 100,
      min: 1,
      description:
        'Open connections one client address (an IPv6 client: its /64) may hold; one more is closed ' +
        "as it opens, before it is read. Connections from a trusted proxy (`TRUST_PROXY`'s addresses, " +
        'and every peer with a hop count) are not counted: the proxy carries many clients, so the ' +
        'proxy holds each client to a cap of its own.',
    }),
  },
};
