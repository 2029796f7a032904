import { createServer } from 'node:net';
import type { FastifyInstance, FastifyListenOptions } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { ManualClock } from '../../src/clock.ts';
import { type Config, DEFAULT_LIMITS, type Limits, loadConfig } from '../../src/config.ts';
import { createDeps } from '../../src/deps.ts';
import { mintToken } from '../../src/domain/auth/tokens.ts';
import { createMember, type Member } from '../../src/domain/members/members.ts';
import type { Deps } from '../../src/operations/services.ts';
import type { Operation } from '../../src/operations/types.ts';
import { type EngineName, freshDatabase, type TestDatabase } from './databases.ts';

/**
 * For servers that are not ours and must be told a port (PostgreSQL, redis-server): ports from here
 * up to the kernel's ephemeral range (32768 on Linux by default) are never handed to outgoing
 * connections, so between checking one and the server listening only another listener could take it.
 * Our own servers use holdPort or listen(0) instead, which leave no such gap.
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

/** A port that listen(0) picked, bound until release(); the app binds it beside (SO_REUSEPORT). */
export interface HeldPort {
  port: number;
  release(): Promise<void>;
}

/**
 * Holds a port from listen(0) (or `port`, already bound with SO_REUSEPORT by an app) so that the
 * app's public URL can name it before the app exists, and nothing else can take it until the app
 * listens there too. Nothing connects to it meanwhile: the URL is not out yet.
 */
export function holdPort(port = 0): Promise<HeldPort> {
  // A connection that reached the holder anyway is closed at once rather than left hanging.
  const holder = createServer((socket) => socket.destroy());
  return new Promise((resolve, reject) => {
    holder.once('error', reject);
    holder.listen({ port, host: '127.0.0.1', reusePort: true }, () => {
      const address = holder.address();
      resolve({
        port: typeof address === 'object' && address ? address.port : port,
        release: () => new Promise((done) => holder.close(() => done())),
      });
    });
  });
}

/** A port nothing listens on (listen(0), then closed): for a server that is meant to be down. */
export async function closedPort(): Promise<number> {
  const held = await holdPort();
  await held.release();
  return held.port;
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
  /** Capture the app's log lines here, at the most verbose level unless `logLevel` says otherwise. */
  logStream?: NodeJS.WritableStream;
  logLevel?: string;
  /** Reuse an existing database instead of a fresh one. */
  database?: TestDatabase;
  /** Listen on this held port (a test that registers the app's URL elsewhere first); default: one from listen(0). */
  port?: HeldPort;
  /** Routes added to the built app before it listens (a surface mounted a second way, say). */
  extend?: (app: FastifyInstance, deps: Deps) => void;
}

/** The real app on a real port with a real database; the clock is the only thing a test controls. */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const database = options.database ?? (await freshDatabase(options.engine ?? 'sqlite'));
  const clock = new ManualClock();
  const held = options.port ?? (await holdPort());
  const port = held.port;
  // Frozen like any loaded config, so a test fails wherever the code would change a setting.
  const config = loadConfig(
    {},
    {
      port,
      host: '127.0.0.1',
      databaseUrl: database.url,
      publicUrl: `http://127.0.0.1:${port}`,
      seedDemo: false,
      // Every answer the suites produce is checked against its operation's output schema.
      checkOutputSchemas: true,
      limits: { ...DEFAULT_LIMITS, ...options.limits },
      ...options.config,
    },
  );
  let deps!: Deps;
  let app!: FastifyInstance;
  const boot = async () => {
    deps = await createDeps(config, { clock });
    app = await buildApp(deps, {
      logger: options.logStream ? { level: options.logLevel ?? 'trace', stream: options.logStream } : false,
      extraOperations: options.extraOperations,
    });
    options.extend?.(app, deps);
    // Beside the holder, which owns the port until the app does (see holdPort).
    await app.listen({ port, host: '127.0.0.1', reusePort: true } as FastifyListenOptions);
  };
  const shutdown = async () => {
    await app.close();
    await deps.close();
  };
  await boot();
  await held.release();
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
      // The port stays held between the two instances.
      const between = await holdPort(port);
      await shutdown();
      // Let the client see the old keep-alive sockets close before anything is sent to the new server.
      await new Promise((resolve) => setTimeout(resolve, 50));
      await boot();
      await between.release();
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
      const minted = await mintToken(deps, member, {
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
