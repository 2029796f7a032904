import { isIP } from 'node:net';
import { parseCookie } from 'cookie';
import { parse } from 'fast-querystring';
import ipaddr from 'ipaddr.js';

/**
 * The key of a request whose client address is unknown: node drops the socket's address once the
 * client has gone (a request still being handled after an early disconnect has none).
 */
export const UNKNOWN_CLIENT = 'unknown';

/** IPv6 clients are keyed by their /64 (`2001:db8:0:1::/64`): one host usually holds a whole prefix. */
export function rateKeyForIp(ip: string | undefined): string {
  if (typeof ip !== 'string' || ip.length === 0) return UNKNOWN_CLIENT;
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
 * (fast-querystring: repeated names become lists), for the front door and batch items alike.
 */
export function queryInput(query: string): Record<string, unknown> {
  return query.length === 0 ? {} : parse(query);
}
