import type { IncomingHttpHeaders } from 'node:http';

const originOfUrl = new Map<string, string>();

/** The origin (scheme://host[:port]) of the configured public URL, parsed once per URL. */
function publicOrigin(publicUrl: string): string {
  let origin = originOfUrl.get(publicUrl);
  if (origin === undefined) {
    try {
      origin = new URL(publicUrl).origin;
    } catch {
      origin = '';
    }
    originOfUrl.set(publicUrl, origin);
  }
  return origin;
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Why a state-changing request that a browser's cookie would authenticate must be refused as
 * cross-site, or undefined when it may go on. Browsers say where a request comes from:
 * `Sec-Fetch-Site` (cross-site is refused; same-site must then prove itself by its Origin) and
 * `Origin`, which, when sent, must be the configured public URL's origin or this request's own
 * host (http or https). A client that sends neither (curl, an agent's HTTP library) is no browser
 * and cannot have been driven by another site, so it goes on.
 */
export function crossSiteReason(headers: IncomingHttpHeaders, publicUrl: string): string | undefined {
  const site = single(headers['sec-fetch-site'])?.trim().toLowerCase();
  if (site === 'cross-site') return 'Sec-Fetch-Site says the request comes from another site.';
  const origin = single(headers.origin)?.trim();
  if (origin === undefined || origin === '') {
    if (site === 'same-site') return 'A same-site request must send an Origin that names this service.';
    return undefined;
  }
  if (origin === publicOrigin(publicUrl)) return undefined;
  const host = single(headers.host)?.trim().toLowerCase();
  if (host && (origin.toLowerCase() === `https://${host}` || origin.toLowerCase() === `http://${host}`))
    return undefined;
  return `Origin ${origin.slice(0, 200)} is not this service's origin.`;
}

/** Methods that must not change state, so that no origin check applies to them. */
export function isSafeMethod(method: string): boolean {
  return method === 'GET' || method === 'HEAD' || method === 'OPTIONS';
}
