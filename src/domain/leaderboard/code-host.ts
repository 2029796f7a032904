import type { CodeHostConfig } from '../../config.ts';
import { type OutboundError, outboundFetch } from '../../outbound.ts';
import type { Week } from './week.ts';

/** Who an account on the host is; `id` is stable across renames, `login` is what search and people use. */
export interface HostAccount {
  id: string;
  login: string;
}

/**
 * How a call to the host failed. `refused`: the host rejected the credential (or the OAuth code);
 * `rate_limited`: back off until `retryAfterSeconds`; `unavailable`: timeout, network or 5xx;
 * `not_found`: the account is unknown to the host (renamed or deleted); `bad_response`: an answer
 * that is not what the GitHub REST API sends.
 */
export type HostFailure = 'refused' | 'rate_limited' | 'unavailable' | 'not_found' | 'bad_response';

export class CodeHostError extends Error {
  readonly failure: HostFailure;
  readonly retryAfterSeconds?: number;

  constructor(failure: HostFailure, message: string, retryAfterSeconds?: number) {
    super(message);
    this.failure = failure;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

type Fetch = (
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string },
) => Promise<Response>;

/** A code host answer larger than this is not a user or a commit search page. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/**
 * The subset of the GitHub REST API and OAuth web flow the leaderboard needs. GitHub Enterprise
 * speaks it under its own base URLs; Gitea and Forgejo serve the same OAuth endpoints and `/user`
 * (commit search is GitHub's: see docs/decisions.md). Host tokens pass through and are never stored.
 */
export class CodeHost {
  private readonly config: CodeHostConfig;
  private readonly fetchImpl: Fetch;

  constructor(
    config: CodeHostConfig,
    fetchImpl: Fetch = (url, init) =>
      outboundFetch(url, init, { timeoutMs: config.timeoutMs, maxBytes: MAX_ANSWER_BYTES }),
  ) {
    this.config = config;
    this.fetchImpl = fetchImpl;
  }

  get oauthEnabled(): boolean {
    return Boolean(this.config.clientId && this.config.clientSecret);
  }

  /** Where the member's browser goes to grant access; no scope is asked for (public identity only). */
  authorizeUrl(state: string, redirectUri: string): string {
    const params = new URLSearchParams({
      client_id: this.config.clientId ?? '',
      redirect_uri: redirectUri,
      state,
      allow_signup: 'false',
    });
    return `${this.config.webUrl}/login/oauth/authorize?${params}`;
  }

  /** Trades the callback's code for an access token (used once to read the account, then dropped). */
  async exchangeCode(code: string, redirectUri: string): Promise<string> {
    const body = await this.send(`${this.config.webUrl}/login/oauth/access_token`, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: JSON.stringify({
        client_id: this.config.clientId,
        client_secret: this.config.clientSecret,
        code,
        redirect_uri: redirectUri,
      }),
    });
    // GitHub answers a bad or reused code with 200 and an `error` field.
    const token = (body as { access_token?: unknown }).access_token;
    if (typeof token === 'string' && token) return token;
    const error = (body as { error?: unknown }).error;
    if (typeof error === 'string') throw new CodeHostError('refused', `the host refused the code (${error})`);
    throw new CodeHostError('bad_response', 'the token exchange answered without an access token');
  }

  /** The account a token belongs to (an OAuth token or a member's personal access token). */
  async accountOf(token: string): Promise<HostAccount> {
    const body = (await this.send(`${this.config.apiUrl}/user`, {
      headers: this.apiHeaders(token),
    })) as { id?: unknown; login?: unknown };
    const id = typeof body.id === 'number' || typeof body.id === 'string' ? String(body.id) : '';
    const login = typeof body.login === 'string' ? body.login : '';
    // The login goes into a search query later: one plain term, so no qualifier can ride along.
    if (!id || !/^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,98})$/.test(login))
      throw new CodeHostError('bad_response', 'the host described the account without a usable id and login');
    return { id, login };
  }

  /**
   * Commits authored by `login` in the week, from commit search (`total_count`): the default branches
   * of repositories the search can see, which with the service's token means public ones.
   */
  async countCommits(login: string, week: Week): Promise<number> {
    const from = new Date(week.start).toISOString().replace('.000Z', 'Z');
    const to = new Date(week.end - 1000).toISOString().replace('.000Z', 'Z');
    const params = new URLSearchParams({ q: `author:${login} author-date:${from}..${to}`, per_page: '1' });
    const body = (await this.send(`${this.config.apiUrl}/search/commits?${params}`, {
      headers: this.apiHeaders(this.config.apiToken),
    })) as { total_count?: unknown };
    if (typeof body.total_count !== 'number' || !Number.isInteger(body.total_count) || body.total_count < 0)
      throw new CodeHostError('bad_response', 'commit search answered without a total_count');
    return body.total_count;
  }

  private apiHeaders(token: string | undefined): Record<string, string> {
    return {
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28',
      'user-agent': 'agent-commons',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    };
  }

  /** One request with the timeout; every failure becomes a CodeHostError that names no secret. */
  private async send(
    url: string,
    init: { method?: string; headers?: Record<string, string>; body?: string },
  ): Promise<unknown> {
    let response: Response;
    try {
      response = await this.fetchImpl(url, init);
    } catch (error) {
      const kind = (error as OutboundError).kind;
      const reason =
        kind === 'timeout'
          ? 'timed out'
          : kind === 'too_large'
            ? 'sent too large an answer'
            : 'could not be reached';
      throw new CodeHostError('unavailable', `the code host ${reason}`);
    }
    const text = await response.text().catch(() => '');
    if (!response.ok) throw failureOf(response, text);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new CodeHostError('bad_response', `the code host answered ${response.status} with no JSON`);
    }
  }
}

/** GitHub signals rate limits as 429, or as 403 with `x-ratelimit-remaining: 0` or a Retry-After. */
function failureOf(response: Response, text: string): CodeHostError {
  const { status, headers } = response;
  const retryAfter = Number(headers.get('retry-after'));
  const reset = Number(headers.get('x-ratelimit-reset'));
  const exhausted = headers.get('x-ratelimit-remaining') === '0';
  if (
    status === 429 ||
    (status === 403 && (exhausted || headers.has('retry-after') || /rate limit/i.test(text)))
  ) {
    const wait =
      Number.isFinite(retryAfter) && retryAfter > 0
        ? retryAfter
        : Number.isFinite(reset) && reset > 0
          ? Math.max(0, Math.ceil(reset - Date.now() / 1000))
          : undefined;
    return new CodeHostError('rate_limited', `the code host rate-limited the call (${status})`, wait);
  }
  if (status === 401 || status === 403)
    return new CodeHostError('refused', `the code host refused the credential (${status})`);
  if (status === 404 || status === 422)
    return new CodeHostError('not_found', `the code host does not know the account (${status})`);
  if (status >= 500) return new CodeHostError('unavailable', `the code host failed (${status})`);
  return new CodeHostError('bad_response', `the code host answered ${status}`);
}
