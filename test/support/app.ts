import { createServer } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { ManualClock } from '../../src/clock.ts';
import { type Config, type Limits, loadConfig } from '../../src/config.ts';
import { createDeps, type Deps } from '../../src/deps.ts';
import { mintToken } from '../../src/domain/auth/tokens.ts';
import { createMember, type Member } from '../../src/domain/members/members.ts';
import type { Operation } from '../../src/operations/types.ts';
import { type EngineName, freshDatabase, type TestDatabase } from './databases.ts';

/**
 * Ports from here up to the kernel's ephemeral range (32768 on Linux by default) are never handed to
 * outgoing connections. A port chosen by listen(0) is: between checking it and the app listening
 * on it, a connection to PostgreSQL or Redis from a test running alongside could take it
 * (EADDRINUSE, seen in CI).
 */
const PORTS_FROM = 20_000;
const PORTS_TO = 32_000;

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A port nothing listens on, below the ephemeral range (so only another listener could take it). */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = PORTS_FROM + Math.floor(Math.random() * (PORTS_TO - PORTS_FROM));
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port between ${PORTS_FROM} and ${PORTS_TO}`);
}

export interface TestApp {
  baseUrl: string;
  deps: Deps;
  clock: ManualClock;
  app: FastifyInstance;
  database: TestDatabase;
  /** Another instance on the same database (a second server behind the load balancer). */
  restart(): Promise<void>;
  close(): Promise<void>;
  call(method: string, path: string, options?: CallOptions): Promise<CallResponse>;
  member(tier: string, name?: string): Promise<Member>;
  token(member: Member, scopes: string[], options?: { sandbox?: boolean }): Promise<string>;
}

export interface CallOptions {
  token?: string;
  body?: unknown;
  /** Sent as is, with no JSON encoding (for malformed-body tests). */
  rawBody?: string;
  headers?: Record<string, string>;
}

export interface CallResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface TestAppOptions {
  engine?: EngineName;
  limits?: Partial<Limits>;
  config?: Partial<Config>;
  extraOperations?: Operation[];
  /** Capture the app's log lines here, at the most verbose level. */
  logStream?: NodeJS.WritableStream;
  /** Reuse an existing database instead of a fresh one. */
  database?: TestDatabase;
  /** Listen here (a test that registers the app's URL elsewhere first); default: a free port. */
  port?: number;
  /** false: GET operations go through Fastify too (see src/surfaces/direct-reads.ts). */
  directReads?: boolean;
}

/** The real app on a real port with a real database; the clock is the only thing a test controls. */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const database = options.database ?? (await freshDatabase(options.engine ?? 'sqlite'));
  const clock = new ManualClock();
  const port = options.port ?? (await freePort());
  const base = loadConfig({});
  const config: Config = {
    ...base,
    port,
    host: '127.0.0.1',
    databaseUrl: database.url,
    publicUrl: `http://127.0.0.1:${port}`,
    seedDemo: false,
    // Every answer the suites produce is checked against its operation's output schema.
    checkOutputSchemas: true,
    limits: { ...base.limits, ...options.limits },
    ...options.config,
  };
  let deps!: Deps;
  let app!: FastifyInstance;
  const boot = async () => {
    deps = await createDeps(config, { clock });
    app = await buildApp(deps, {
      logger: options.logStream ? { level: 'trace', stream: options.logStream } : false,
      extraOperations: options.extraOperations,
      directReads: options.directReads,
    });
    await app.listen({ port, host: '127.0.0.1' });
  };
  const shutdown = async () => {
    await app.close();
    await deps.close();
  };
  await boot();
  const baseUrl = config.publicUrl;
  const testApp: TestApp = {
    baseUrl,
    get deps() {
      return deps;
    },
    get app() {
      return app;
    },
    clock,
    database,
    restart: async () => {
      await shutdown();
      // Let the client see the old keep-alive sockets close before anything is sent to the new server.
      await new Promise((resolve) => setTimeout(resolve, 50));
      await boot();
    },
    close: async () => {
      await shutdown();
      if (!options.database) await database.drop();
    },
    async call(method, path, callOptions = {}) {
      const headers: Record<string, string> = { ...callOptions.headers };
      let body: string | undefined;
      if (callOptions.rawBody !== undefined) body = callOptions.rawBody;
      else if (callOptions.body !== undefined) {
        body = JSON.stringify(callOptions.body);
        headers['content-type'] ??= 'application/json';
      }
      if (callOptions.token !== undefined) headers.authorization = `Bearer ${callOptions.token}`;
      const response = await fetch(baseUrl + path, { method, headers, body });
      const text = await response.text();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      return { status: response.status, headers: response.headers, body: parsed, text };
    },
    async member(tier, name = `Test ${tier}`) {
      const unique = Math.random().toString(36).slice(2, 8);
      return createMember(deps.db, clock, deps.tiers, {
        email: `${tier}-${unique}@test.example`,
        name,
        tier,
      });
    },
    async token(member, scopes, tokenOptions = {}) {
      const minted = await mintToken(deps.db, clock, deps.tiers, member, {
        scopes,
        sandbox: tokenOptions.sandbox ?? false,
        name: 'test token',
        source: 'cli',
      });
      return minted.plaintext;
    },
  };
  return testApp;
}
