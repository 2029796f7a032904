import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import Provider from 'oidc-provider';

export interface ProviderAccount {
  email: string;
  email_verified?: boolean;
}

export interface LocalOidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Who may sign in at the provider: the dev login page takes the key as the login (any password). */
  accounts: Map<string, ProviderAccount>;
  /** Paths the provider was asked for, in order (to see that the relying party fetched the JWKS). */
  requests: string[];
  close(): Promise<void>;
}

/**
 * A real OpenID Connect provider (node-oidc-provider with its built-in dev login and consent pages)
 * on a free local port, with one confidential client registered for the given redirect URIs.
 */
export async function startOidcProvider(redirectUris: string[]): Promise<LocalOidcProvider> {
  // Listening first (on a port listen(0) picks), so the issuer names the port the provider has.
  let handle: (request: IncomingMessage, response: ServerResponse) => void = (_request, response) =>
    response.writeHead(503).end();
  const requests: string[] = [];
  const server: Server = createServer((request, response) => {
    requests.push(new URL(request.url ?? '/', issuer).pathname);
    handle(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('the provider is not listening on a port');
  const issuer = `http://127.0.0.1:${address.port}`;
  const clientId = 'agent-commons-test';
  const clientSecret = randomBytes(24).toString('base64url');
  const accounts = new Map<string, ProviderAccount>();
  const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        // A web client on plain http: the provider only insists on https for the implicit flow.
        redirect_uris: redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [{ ...signingKey, kid: 'test-signing-key', use: 'sig', alg: 'RS256' }] },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    pkce: { methods: ['S256'], required: () => true },
    features: { devInteractions: { enabled: true } },
    // Explicit lifetimes keep the provider from printing a notice for each default it falls back on.
    ttl: {
      Interaction: 600,
      Session: 3600,
      Grant: 3600,
      AccessToken: 600,
      IdToken: 600,
      AuthorizationCode: 60,
    },
    async findAccount(_ctx, sub) {
      const account = accounts.get(sub);
      if (!account) return undefined;
      return { accountId: sub, claims: async () => ({ sub, ...account }) };
    },
  });
  handle = provider.callback();
  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
