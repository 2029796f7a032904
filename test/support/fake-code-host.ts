// A local HTTP server speaking the subset of the GitHub REST API and OAuth web flow the leaderboard
// uses, under GitHub Enterprise's layout (web at the root, the API under /api/v3), so the adapter is
// tested against real requests and responses, base paths included.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HostAccountFixture {
  id: number;
  login: string;
}

/** What the host answers instead of a count (a status with headers and body, or no answer at all). */
export type Failure = { status: number; headers?: Record<string, string>; body?: unknown } | 'hang';

export interface SeenRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
}

export class FakeCodeHost {
  readonly clientId = 'Iv1.fakeclient';
  readonly clientSecret = 'fake-client-secret';
  /** Bearer token → the account it belongs to (OAuth access tokens and personal tokens alike). */
  readonly tokens = new Map<string, HostAccountFixture>();
  /** login → commits this week. */
  readonly commits = new Map<string, number>();
  /** login → failure of its commit search; `*` fails every search. */
  readonly searchFailures = new Map<string, Failure>();
  /** When set, GET /user answers this instead of the account. */
  userFailure?: Failure;
  /** The token the person "approves" on the authorize page; its code is exchanged for it. */
  authorizeAs?: string;
  readonly requests: SeenRequest[] = [];
  private readonly codes = new Map<string, string>();
  private codeSequence = 0;
  private readonly server = createServer((request, response) => void this.handle(request, response));
  url = '';

  get apiUrl(): string {
    return `${this.url}/api/v3`;
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  seen(path: string): SeenRequest[] {
    return this.requests.filter((request) => request.path === path);
  }

  private async handle(request: IncomingMessage, response: ServerResponse) {
    const url = new URL(request.url ?? '/', this.url);
    let body = '';
    for await (const chunk of request) body += chunk;
    this.requests.push({
      method: request.method ?? '',
      path: url.pathname,
      query: url.searchParams,
      headers: request.headers,
      body,
    });
    const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
      response.end(JSON.stringify(payload));
    };
    const route = `${request.method} ${url.pathname}`;
    if (route === 'GET /login/oauth/authorize') {
      // The person approves at once: back to redirect_uri with a single-use code and the state.
      const code = `code_${++this.codeSequence}`;
      if (this.authorizeAs) this.codes.set(code, this.authorizeAs);
      const back = new URL(url.searchParams.get('redirect_uri') ?? '');
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      response.writeHead(302, { location: back.toString() });
      return response.end();
    }
    if (route === 'POST /login/oauth/access_token') {
      const form = JSON.parse(body || '{}') as Record<string, string>;
      const token = this.codes.get(form.code);
      this.codes.delete(form.code);
      const granted =
        form.client_id === this.clientId && form.client_secret === this.clientSecret && token !== undefined;
      const payload: Record<string, string> = granted
        ? { access_token: token, token_type: 'bearer', scope: '' }
        : { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' };
      // Like GitHub: form-encoded unless JSON is asked for, and a bad code is still a 200.
      if (request.headers.accept !== 'application/json') {
        response.writeHead(200, { 'content-type': 'application/x-www-form-urlencoded' });
        return response.end(new URLSearchParams(payload).toString());
      }
      return send(200, payload);
    }
    if (route === 'GET /api/v3/user') {
      if (this.userFailure === 'hang') return;
      if (this.userFailure)
        return send(this.userFailure.status, this.userFailure.body ?? {}, this.userFailure.headers);
      const token = (request.headers.authorization ?? '').replace(/^Bearer /, '');
      const account = this.tokens.get(token);
      if (!account) return send(401, { message: 'Bad credentials' });
      return send(200, { ...account, type: 'User', name: null });
    }
    if (route === 'GET /api/v3/search/commits') {
      const q = url.searchParams.get('q') ?? '';
      const login = /author:(\S+)/.exec(q)?.[1] ?? '';
      const failure = this.searchFailures.get(login) ?? this.searchFailures.get('*');
      if (failure === 'hang') return; // never answers: the adapter's timeout must give up
      if (failure) return send(failure.status, failure.body ?? { message: 'failure' }, failure.headers);
      return send(200, { total_count: this.commits.get(login) ?? 0, incomplete_results: false, items: [] });
    }
    send(404, { message: 'Not Found' });
  }
}
