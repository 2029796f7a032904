import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import proxyAddr from '@fastify/proxy-addr';
import { parseCookie } from 'cookie';
import { parse } from 'fast-querystring';
import ipaddr from 'ipaddr.js';

/**
 * The key of a request whose client address is unknown: node drops the socket's address once the
 * client has gone (a request still being handled after an early disconnect has none).
 */
export const UNKNOWN_CLIENT = 'unknown';

/**
 * The proxies whose `X-Forwarded-For` entries name the client (`TRUST_PROXY`): the `hops` nearest
 * ones (the socket's peer is the first; 0: none, the socket's address is the client's), or those at
 * these addresses, CIDR ranges and proxy-addr's names (`loopback`, `linklocal`, `uniquelocal`).
 */
export type TrustedProxies = { readonly hops: number } | { readonly addresses: readonly string[] };

/** Whether the address `hop` steps from the socket (0: the socket's peer) is a trusted proxy. */
export type ProxyTrust = (address: string, hop: number) => boolean;

/**
 * The one rule both Fastify (its `trustProxy` option) and the per-address connection cap read the
 * client by.
 */
export function compileProxyTrust(trusted: TrustedProxies): ProxyTrust {
  if ('addresses' in trusted) return proxyAddr.compile([...trusted.addresses]);
  const { hops } = trusted;
  return (_address, hop) => hop < hops;
}

/** Whether no proxy is trusted (`TRUST_PROXY` unset, false or 0): the socket's peer is the client. */
export function trustsNoProxy(trusted: TrustedProxies): boolean {
  return 'hops' in trusted && trusted.hops === 0;
}

/**
 * The client's address: walking `X-Forwarded-For` from the right, the first address that is not a
 * trusted proxy (the socket's peer when that one is not). Entries left of it are the client's own
 * words and never count. Empty once node has dropped the socket's address (see UNKNOWN_CLIENT).
 */
export function clientAddress(request: IncomingMessage, trust: ProxyTrust): string {
  // proxy-addr's types say string; it is undefined when node has dropped the socket's address.
  return (proxyAddr(request, trust) as string | undefined) ?? '';
}

/** IPv6 clients are keyed by their /64 (`2001:db8:0:1::/64`): one host usually holds a whole prefix. */
export function rateKeyForIp(ip: string | undefined): string {
  if (typeof ip !== 'string' || ip.length === 0) return UNKNOWN_CLIENT;
  // Every IPv6 address has a colon: an IPv4 client is its own key without node's address regexps.
  if (!ip.includes(':')) return ip;
  if (isIP(ip) !== 6 || !ipaddr.IPv6.isValid(ip)) return ip;
  const address = ipaddr.IPv6.parse(ip);
  if (address.isIPv4MappedAddress()) return address.toIPv4Address().toString();
  return `${address.parts
    .slice(0, 4)
    .map((part) => part.toString(16))
    .join(':')}::/64`;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function acceptRequestId(header: string | string[] | undefined): string | undefined {
  return typeof header === 'string' && REQUEST_ID.test(header) ? header : undefined;
}

/** A cookie's value from a Cookie header: the first of that name, undefined when it does not decode. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  return header ? parseCookie(header, { decode: decodeOrSkip })[name] : undefined;
}

function decodeOrSkip(value: string): string | undefined {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

/**
 * An operation's query input from the text after `?`, parsed as Fastify's router parses it
 * (fast-querystring: repeated names become lists), for batch items.
 */
export function queryInput(query: string): Record<string, unknown> {
  return query.length === 0 ? {} : parse(query);
}
