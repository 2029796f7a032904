// A web server over real TLS on 127.0.0.1, for the parts of the service that fetch only https URLs (an
// MCP host's client ID metadata document). Its certificate is made fresh by openssl for 127.0.0.1 and
// added to this process's default trusted certificates, so the service's own outbound fetcher
// (src/outbound.ts) verifies it as it verifies any public server's, with nothing switched off.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';

let trusted: { key: string; cert: string } | undefined;

/** A key and a self-signed certificate for 127.0.0.1, trusted by this process from now on. */
function trustedLoopbackCertificate(): { key: string; cert: string } {
  if (trusted) return trusted;
  const dir = mkdtempSync(join(tmpdir(), 'local-https-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    trusted = {
      key: readFileSync(join(dir, 'key.pem'), 'utf8'),
      cert: readFileSync(join(dir, 'cert.pem'), 'utf8'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  tls.setDefaultCACertificates([...tls.getCACertificates('default'), trusted.cert]);
  return trusted;
}

export interface LocalHttps {
  /** `https://127.0.0.1:<port>` */
  base: string;
  close(): Promise<void>;
}

export async function startLocalHttps(
  handler: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<LocalHttps> {
  const server: Server = createServer(trustedLoopbackCertificate(), handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
