import assert from 'node:assert/strict';
import type { Deps } from '../../src/operations/services.ts';

export interface CsrfPair {
  cookie?: string;
  field: string;
}

/** A pair nobody was given, shaped like a real one: the cookie and the field agree. */
export const INVENTED_CSRF_PAIR: CsrfPair = {
  cookie: 'csrf_0123456789abcdef0123456789abcdef0123456789abcdef',
  field: 'csrf_0123456789abcdef0123456789abcdef0123456789abcdef',
};

/** A browser of sorts: keeps cookies, never follows redirects, posts forms urlencoded. */
export class Browser {
  private readonly baseUrl: string;
  readonly cookies = new Map<string, string>();
  /** The CSRF field of the last page that had a form, as a person's browser would submit it. */
  private formCsrf: string | undefined;
  constructor(baseUrl: string) {
    this.baseUrl = baseUrl;
  }

  get cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  async request(method: string, path: string, form?: Record<string, string | string[]>) {
    const response = await fetch(this.baseUrl + path, {
      method,
      redirect: 'manual',
      headers: {
        cookie: this.cookieHeader,
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form ? encodeForm(form) : undefined,
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const index = pair.indexOf('=');
      const [name, value] = [pair.slice(0, index), pair.slice(index + 1)];
      if (value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await response.text();
    const field = text.match(/name="csrf" value="([^"]+)"/);
    if (field) this.formCsrf = field[1];
    return { status: response.status, headers: response.headers, text };
  }

  /** The token the last page's forms carried (each page's forms carry the same one). */
  get csrf(): string {
    return this.formCsrf ?? '';
  }

  /** What this browser would send as a form's CSRF proof: its `__csrf` cookie, if any, and the field. */
  get csrfPair(): CsrfPair {
    return { cookie: this.cookies.get('__csrf'), field: this.csrf };
  }

  /** This browser, with its session, holding another CSRF pair (another browser's, or made up). */
  withCsrfPair(pair: CsrfPair): Browser {
    const copy = new Browser(this.baseUrl);
    for (const [name, value] of this.cookies) if (name !== '__csrf') copy.cookies.set(name, value);
    if (pair.cookie) copy.cookies.set('__csrf', pair.cookie);
    copy.formCsrf = pair.field;
    return copy;
  }
}

export function linkFromOutbox(html: string): string {
  const match = html.match(/\/signin\/confirm\?link=([A-Za-z0-9_%-]+)/);
  assert.ok(match, 'the outbox shows a sign-in link');
  return decodeURIComponent(match[1]);
}

/** The dev outbox's address with the key the server prints at start (the person at its terminal has it). */
export function outboxPath(deps: Pick<Deps, 'mailer'>): string {
  const outbox = deps.mailer.outbox;
  assert.ok(outbox, 'this server has a dev outbox');
  return `/dev/outbox?key=${outbox.key}`;
}

/** Signs a member in the way a person does: the form, the link from the dev outbox, the confirm button. */
export async function signInThroughOutbox(
  server: { baseUrl: string; deps: Pick<Deps, 'mailer'> },
  email: string,
): Promise<Browser> {
  const browser = new Browser(server.baseUrl);
  await browser.request('GET', '/signin');
  await browser.request('POST', '/signin', { email, csrf: browser.csrf });
  const secret = linkFromOutbox((await browser.request('GET', outboxPath(server.deps))).text);
  const done = await browser.request('POST', '/signin/confirm', { link: secret, csrf: browser.csrf });
  assert.equal(done.status, 303);
  // Where the browser lands: its forms carry the signed-in session's token.
  await browser.request('GET', done.headers.get('location')!);
  return browser;
}

function encodeForm(form: Record<string, string | string[]>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(form)) {
    for (const item of Array.isArray(value) ? value : [value]) params.append(name, item);
  }
  return params.toString();
}
