import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Every request the service makes to another server (corpus URLs, the events feed, RSVP delivery,
 * the research provider, the code host) goes through `outboundFetch`: a deadline for the whole
 * exchange, a cap on the body, a limit on redirects, and, where the address comes from outside the
 * operator's configuration (corpus URLs), a refusal of loopback, private and link-local addresses,
 * checked on the address actually connected to (so a DNS answer cannot swap it after the check).
 */
export interface OutboundPolicy {
  timeoutMs: number;
  maxBytes: number;
  /** Redirects followed before giving up (default 5). */
  maxRedirects?: number;
  /** false: refuse any address that is not public unicast (default true: the operator chose it). */
  privateAddresses?: boolean;
}

export type OutboundFailure = 'timeout' | 'too_large' | 'too_many_redirects' | 'private_address' | 'network';

export class OutboundError extends Error {
  readonly kind: OutboundFailure;

  constructor(kind: OutboundFailure, message: string) {
    super(message);
    this.kind = kind;
    this.name = 'OutboundError';
  }
}

export interface OutboundInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** True for an address anyone on the internet could also reach: public unicast only. */
export function isPublicAddress(address: string): boolean {
  try {
    const parsed = ipaddr.process(address);
    return parsed.range() === 'unicast';
  } catch {
    return false;
  }
}

const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, '', 0);
    const allowed = addresses.filter((entry) => isPublicAddress(entry.address));
    if (allowed.length === 0) {
      const refused = new OutboundError(
        'private_address',
        `${hostname} resolves to a loopback, private or link-local address`,
      );
      return callback(refused as NodeJS.ErrnoException, '', 0);
    }
    if ((options as { all?: boolean }).all)
      return (callback as (e: null, a: LookupAddress[]) => void)(null, allowed);
    callback(null, allowed[0].address, allowed[0].family);
  });
};

/** A literal IP in the URL never goes through lookup, so it is checked here. */
function refuseLiteralPrivate(url: URL): void {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (ipaddr.isValid(host) && !isPublicAddress(host))
    throw new OutboundError('private_address', `${url.host} is a loopback, private or link-local address`);
}

function once(url: URL, init: OutboundInit, policy: OutboundPolicy, signal: AbortSignal) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>(
    (resolve, reject) => {
      const client = url.protocol === 'https:' ? https : http;
      const request = client.request(url, {
        method: init.method ?? 'GET',
        headers: init.headers,
        signal,
        ...(policy.privateAddresses === false ? { lookup: publicOnlyLookup } : {}),
      });
      request.once('error', reject);
      request.once('response', (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > policy.maxBytes) {
            response.destroy();
            reject(new OutboundError('too_large', `${url.origin} sent more than ${policy.maxBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        response.once('error', reject);
        response.once('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks),
          }),
        );
      });
      request.end(init.body);
    },
  );
}

/** Fetches `target` under `policy`; answers a standard Response whose body is already read. */
export async function outboundFetch(
  target: string,
  init: OutboundInit,
  policy: OutboundPolicy,
): Promise<Response> {
  const signal = AbortSignal.timeout(policy.timeoutMs);
  let url = new URL(target);
  let current = { ...init };
  const maxRedirects = policy.maxRedirects ?? 5;
  for (let hop = 0; ; hop++) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new OutboundError('network', `${url.protocol} addresses are not fetched`);
    if (policy.privateAddresses === false) refuseLiteralPrivate(url);
    let answer: Awaited<ReturnType<typeof once>>;
    try {
      answer = await once(url, current, policy, signal);
    } catch (error) {
      if (error instanceof OutboundError) throw error;
      if (signal.aborted)
        throw new OutboundError('timeout', `${url.origin} did not answer within ${policy.timeoutMs} ms`);
      throw new OutboundError(
        'network',
        `${url.origin} is unreachable (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      );
    }
    const location = answer.headers.location;
    if (REDIRECTS.has(answer.status) && location) {
      if (hop >= maxRedirects)
        throw new OutboundError('too_many_redirects', `${target} redirected more than ${maxRedirects} times`);
      const next = new URL(location, url);
      // Credentials stay with the origin they were given for.
      if (next.origin !== url.origin && current.headers) {
        const {
          authorization: _a,
          cookie: _c,
          ...rest
        } = Object.fromEntries(
          Object.entries(current.headers).map(([name, value]) => [name.toLowerCase(), value]),
        );
        current = { ...current, headers: rest };
      }
      if (
        answer.status === 303 ||
        ((answer.status === 301 || answer.status === 302) && current.method === 'POST')
      )
        current = { ...current, method: 'GET', body: undefined };
      url = next;
      continue;
    }
    const headers = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      if (Array.isArray(value)) for (const item of value) headers.append(name, item);
      else if (value !== undefined) headers.set(name, value);
    }
    const nullBody = answer.status === 204 || answer.status === 304 || answer.status < 200;
    const response = new Response(nullBody ? null : new Uint8Array(answer.body), {
      status: answer.status,
      headers,
    });
    Object.defineProperty(response, 'url', { value: url.href });
    return response;
  }
}
