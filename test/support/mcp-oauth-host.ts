import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';

/**
 * What an MCP host keeps for one server, in memory: the SDK's OAuthClientProvider. Its browser step
 * is left to the test (`authorizationUrl`), and its redirect URI is a loopback listener that takes
 * the code, as a desktop host's is.
 */
export class InMemoryOAuthHost implements OAuthClientProvider {
  readonly redirectUrl: string;
  authorizationUrl?: URL;
  private information?: OAuthClientInformationMixed;
  private saved?: OAuthTokens;
  private verifier?: string;
  private readonly stateValue = `state-${Math.random().toString(36).slice(2)}`;

  constructor(redirectUrl: string) {
    this.redirectUrl = redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Desktop host (SDK)',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state() {
    return this.stateValue;
  }
  clientInformation() {
    return this.information;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    if (!this.verifier) throw new Error('no code verifier saved');
    return this.verifier;
  }
}

/** A loopback listener for the redirect: resolves with the query the browser brought back. */
export async function loopbackRedirect(): Promise<{
  url: string;
  received: Promise<URLSearchParams>;
  close(): Promise<void>;
}> {
  let port = 0;
  let deliver!: (params: URLSearchParams) => void;
  const received = new Promise<URLSearchParams>((resolve) => {
    deliver = resolve;
  });
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', `http://127.0.0.1:${port}`);
    if (url.pathname !== '/callback') {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html' }).end('<h1>Done: you can close this window</h1>');
    deliver(url.searchParams);
  });
  // Port 0: listening is the check, so nothing can take the port in between.
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/callback`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
