import { isLoopback } from '../../config.ts';

/**
 * Which authority a signature's `@authority` and `@target-uri` are judged against.
 *
 * The request's own `Host`, when it is one of the service's names: PUBLIC_URL's host and port, and
 * on a local server (PUBLIC_URL on loopback) `localhost`, `127.0.0.1` and `[::1]` with the same port,
 * which all reach the one server. Any other `Host` (a proxy that rewrites it, a name the service does
 * not answer to) is judged against PUBLIC_URL, so signing the URL the service publishes always works.
 */

export interface JudgedAuthority {
  /** Scheme and authority the signature base is built with. */
  origin: string;
  /** The authority of `origin`, as a refusal names it. */
  expected: string;
  /** Whether `expected` is the request's Host rather than PUBLIC_URL's authority as a fallback. */
  fromHost: boolean;
}

interface ServiceNames {
  fallback: JudgedAuthority;
  /** A lowercased Host value → what a request that carried it is judged against. */
  byHost: Map<string, JudgedAuthority>;
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];
const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443' };

function serviceNames(publicUrl: string): ServiceNames {
  const url = new URL(publicUrl);
  const hosts = isLoopback(url.hostname) ? new Set([url.hostname, ...LOOPBACK_NAMES]) : [url.hostname];
  const byHost = new Map<string, JudgedAuthority>();
  for (const host of hosts) {
    const authority = url.port ? `${host}:${url.port}` : host;
    const judged = { origin: `${url.protocol}//${authority}`, expected: authority, fromHost: true };
    byHost.set(authority, judged);
    // RFC 9421 §2.2.3: a default port is not part of @authority, whether the Host names it or not.
    if (!url.port) byHost.set(`${host}:${DEFAULT_PORTS[url.protocol]}`, judged);
  }
  return { fallback: { origin: url.origin, expected: url.host, fromHost: false }, byHost };
}

const names = new Map<string, ServiceNames>();

export function judgedAuthority(publicUrl: string, host: string | undefined): JudgedAuthority {
  let service = names.get(publicUrl);
  if (service === undefined) {
    service = serviceNames(publicUrl);
    names.set(publicUrl, service);
  }
  return (host !== undefined && service.byHost.get(host.toLowerCase())) || service.fallback;
}
