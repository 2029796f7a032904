import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { Redis } from 'ioredis';

function findRedisServer(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : undefined;
}

/** The redis-server binary, when installed: tests that stop and start a Redis of their own need it. */
export const redisServer = findRedisServer();

/**
 * A redis-server of the test's own on `port` (never the shared one other runs use), without
 * persistence, as the deployment runs it: stopped with SIGKILL, it starts again empty.
 */
export class LocalRedis {
  readonly port: number;
  private child: ChildProcess | undefined;
  constructor(port: number) {
    this.port = port;
  }
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }
  async start(): Promise<void> {
    if (!redisServer) throw new Error('redis-server is not installed');
    this.child = spawn(
      redisServer,
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const client = new Redis(this.url, {
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      client.on('error', () => {});
      const answered = await client
        .connect()
        .then(() => client.ping())
        .catch(() => undefined);
      client.disconnect();
      if (answered === 'PONG') return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error('redis-server did not answer');
  }
  /** SIGKILL: what it held is gone, as after a crash. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
}
