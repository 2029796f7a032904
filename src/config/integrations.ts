// The settings of two other servers the service talks to: an OpenID Connect provider and the code
// host behind the leaderboard (the language model's are in research.ts).
import {
  baseUrl,
  durationMs,
  isLoopback,
  type OptionalGroup,
  optional,
  required,
  type Setting,
  setting,
  text,
} from './settings.ts';

const issuer = setting(
  {
    env: 'OIDC_ISSUER',
    group: 'oidc',
    trim: true,
    accepts: 'https URL (http for localhost / 127.x)',
    defaultText: 'unset',
    description:
      'Issuer URL of an OpenID Connect provider; its metadata is read from ' +
      '`<issuer>/.well-known/openid-configuration`. With `OIDC_CLIENT_ID` it turns on single sign-on ' +
      '(below). https, except for a provider on localhost / 127.x.',
  },
  (raw) => {
    let url: URL;
    try {
      url = new URL(raw ?? '');
    } catch {
      throw new Error(`OIDC_ISSUER must be a URL (got "${raw}")`);
    }
    if (url.protocol !== 'https:' && !isLoopback(url.hostname))
      throw new Error(`OIDC_ISSUER must be https outside localhost (got "${raw}")`);
    return raw as string;
  },
);

/** OpenID Connect sign-in beside the mailed link: on only when both the issuer and the client id are set. */
export const OIDC_SCHEMA: OptionalGroup<{
  issuer: Setting<string>;
  clientId: Setting<string>;
  clientSecret: Setting<string | undefined>;
  label: Setting<string>;
}> = {
  kind: 'optional-group',
  requires: ['issuer', 'clientId'],
  settings: {
    issuer,
    clientId: required({
      env: 'OIDC_CLIENT_ID',
      group: 'oidc',
      trim: true,
      description:
        'Client id registered at the provider, with the redirect URI `<PUBLIC_URL>/signin/oidc/callback`. ' +
        'Set it together with `OIDC_ISSUER`, or neither: one alone stops the process.',
    }),
    clientSecret: optional({
      env: 'OIDC_CLIENT_SECRET',
      group: 'oidc',
      secret: true,
      description:
        'Client secret, sent with HTTP Basic (`client_secret_basic`). Unset: a public client, PKCE only.',
    }),
    label: text({
      env: 'OIDC_LABEL',
      group: 'oidc',
      trim: true,
      default: 'Sign in with single sign-on',
      description: 'Text of the sign-in button.',
    }),
  },
};

/** The GitHub-compatible code host members link for the leaderboard (GitHub, GitHub Enterprise, Gitea, Forgejo). */
export const CODE_HOST_SCHEMA = {
  webUrl: baseUrl({
    env: 'VCS_WEB_URL',
    group: 'code-host',
    default: 'https://github.com',
    description:
      'Where members sign in on the host: the OAuth pages `/login/oauth/authorize` and ' +
      '`/login/oauth/access_token` are under it.',
  }),
  apiUrl: baseUrl({
    env: 'VCS_API_URL',
    group: 'code-host',
    default: 'https://api.github.com',
    description:
      'The REST API base, path included (`https://ghe.example.com/api/v3` on GitHub Enterprise, ' +
      '`https://gitea.example.com/api/v1` on Gitea).',
  }),
  clientId: optional({
    env: 'VCS_CLIENT_ID',
    group: 'code-host',
    description:
      "The OAuth app's client id; its callback URL is `PUBLIC_URL/leaderboard/link/callback`. Linking " +
      'through OAuth is offered only when it and `VCS_CLIENT_SECRET` are set; otherwise members link ' +
      'with a personal access token only.',
  }),
  clientSecret: optional({
    env: 'VCS_CLIENT_SECRET',
    group: 'code-host',
    secret: true,
    description: "The OAuth app's client secret (see `VCS_CLIENT_ID`).",
  }),
  apiToken: optional({
    env: 'VCS_API_TOKEN',
    group: 'code-host',
    secret: true,
    description:
      "The service's own token for the counting job (no scopes needed). Without it the host's " +
      'anonymous search limit applies (10 a minute on GitHub).',
  }),
  timeoutMs: durationMs({
    env: 'VCS_TIMEOUT_MS',
    group: 'code-host',
    default: 10_000,
    min: 100,
    description: 'Every call to the host gives up after this long.',
  }),
};
