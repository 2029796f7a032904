import { isIP } from 'node:net';
import { parse } from 'fast-querystring';

/**
 * The key of a request whose client address is unknown: node drops the socket's address once the
 * client has gone (a request still being handled after an early disconnect has none).
 */
export const UNKNOWN_CLIENT = 'unknown';

/** IPv6 clients are keyed by their /64: one host usually holds a whole prefix. */
export function rateKeyForIp(ip: string | undefined): string {
  if (typeof ip !== 'string' || ip.length === 0) return UNKNOWN_CLIENT;
  const bare = ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
  if (isIP(bare) !== 6) return bare;
  const [head] = bare.split('%');
  const parts = expandIpv6(head);
  return `${parts.slice(0, 4).join(':')}::/64`;
}

function expandIpv6(address: string): string[] {
  const [left, right = ''] = address.split('::');
  const head = left ? left.split(':') : [];
  const tail = address.includes('::') && right ? right.split(':') : [];
  const fill = address.includes('::') ? new Array(8 - head.length - tail.length).fill('0') : [];
  return [...head, ...fill, ...tail].map((p) => p.toLowerCase().replace(/^0+(?=.)/, ''));
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function acceptRequestId(header: string | string[] | undefined): string | undefined {
  return typeof header === 'string' && REQUEST_ID.test(header) ? header : undefined;
}

export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) {
      try {
        return decodeURIComponent(part.slice(index + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/**
 * An operation's query input from the text after `?`, parsed as Fastify's router parses it
 * (fast-querystring: repeated names become lists), for direct reads and batch items alike.
 */
export function queryInput(query: string): Record<string, unknown> {
  return query.length === 0 ? {} : parse(query);
}
