// SIGTERM loses nothing: the real server runs as a child process, takes a stream of
// writes and reads, and is sent SIGTERM mid-stream while a worker holds RSVPs it is delivering to a
// webhook that answers slowly. Counted afterwards: the process exited 0; every write the server
// stored was answered 2xx to its client and every 2xx is stored (an accepted request that failed
// would show as one without the other); nothing was answered 5xx; /readyz said 503 draining while
// the listener was still open; and no job is left claimed.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import { openDatabase } from '../src/storage/database.ts';
import { engines, freshDatabase } from './support/databases.ts';
import { killAllChildren, runCliJson, type ServerProcess, startServer } from './support/processes.ts';

const IN_FLIGHT = 8;
const SIGNAL_AFTER = 120;
const GRACE_MS = 1500;
/** The webhook holds each delivery this long: longer than the grace, so the drain must hand leases back. */
const WEBHOOK_DELAY_MS = 6000;

after(killAllChildren);

/** An event platform that takes its time to confirm each RSVP. */
async function slowWebhook(): Promise<{ url: string; received: () => number; server: Server }> {
  let received = 0;
  const server = createServer((request, response) => {
    received++;
    request.resume();
    const timer = setTimeout(() => response.writeHead(200).end('{}'), WEBHOOK_DELAY_MS);
    response.on('close', () => clearTimeout(timer));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/rsvp`, received: () => received, server };
}

interface Stream {
  acknowledged: Set<string>;
  /** Requests that never reached the server (refused or reset before an answer began). */
  notAccepted: string[];
  /** Answers other than the expected 202/200 (a 5xx or a 503 while draining would land here). */
  unexpected: string[];
  reads: number;
  readyDuringDrain: { status: number; body: Record<string, unknown> } | undefined;
}

/** Writes and reads, IN_FLIGHT at a time, until the server is gone; SIGTERM after SIGNAL_AFTER 202s. */
async function streamAndSignal(server: ServerProcess, token: string, run: string): Promise<Stream> {
  const stream: Stream = {
    acknowledged: new Set(),
    notAccepted: [],
    unexpected: [],
    reads: 0,
    readyDuringDrain: undefined,
  };
  let next = 0;
  let signalled = false;
  let dead = false;
  void server.exited.then(() => {
    dead = true;
  });
  const signal = async () => {
    server.child.kill('SIGTERM');
    // Readiness turns 503 as soon as the signal is handled, while the listener may still take a
    // connection: asked on fresh connections until it says so or the listener has closed.
    while (!dead) {
      try {
        const response = await fetch(`${server.baseUrl}/readyz`, { headers: { connection: 'close' } });
        const body = (await response.json()) as Record<string, unknown>;
        if (response.status !== 200) {
          stream.readyDuringDrain = { status: response.status, body };
          return;
        }
      } catch {
        return; // the listener has closed
      }
    }
  };
  const worker = async (lane: number) => {
    while (!dead && next < 5000) {
      const n = next++;
      if (lane % 2 === 1 && n % 3 === 0) {
        try {
          const response = await fetch(`${server.baseUrl}/api/events/upcoming?limit=3`, {
            signal: AbortSignal.timeout(5000),
          });
          await response.arrayBuffer();
          if (response.status === 200) stream.reads++;
          else stream.unexpected.push(`read ${n}: ${response.status}`);
        } catch (error) {
          stream.notAccepted.push(`read ${n}: ${(error as Error).cause ?? error}`);
          if (signalled) await new Promise((resolve) => setTimeout(resolve, 20));
        }
        continue;
      }
      const id = `2026-07-16-${run}-drain-${n}`;
      let status: number;
      let body: { id?: string };
      try {
        const response = await fetch(`${server.baseUrl}/api/ingest/highlights/pending`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ id, event_title: 'Drain night', dek: `story ${id}` }),
          signal: AbortSignal.timeout(5000),
        });
        status = response.status;
        body = (await response.json()) as typeof body;
      } catch (error) {
        stream.notAccepted.push(`${id}: ${(error as Error).cause ?? error}`);
        if (signalled) await new Promise((resolve) => setTimeout(resolve, 20));
        continue;
      }
      if (status !== 202 || body.id !== id) {
        stream.unexpected.push(`${id}: ${status} ${JSON.stringify(body)}`);
        continue;
      }
      stream.acknowledged.add(id);
      if (stream.acknowledged.size >= SIGNAL_AFTER && !signalled) {
        signalled = true;
        void signal();
      }
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, (_, lane) => worker(lane)));
  return stream;
}

async function stored(databaseUrl: string, run: string) {
  const database = openDatabase(databaseUrl);
  try {
    const highlights = await database.db
      .selectFrom('highlights')
      .select('id')
      .where('id', 'like', `2026-07-16-${run}-drain-%`)
      .execute();
    const rsvps = await database.db.selectFrom('rsvps').select(['id', 'status', 'locked_until']).execute();
    return { highlights: new Set(highlights.map((row) => row.id)), rsvps };
  } finally {
    await database.close();
  }
}

describe('SIGTERM drain', { concurrency: true }, () => {
  for (const engine of engines) {
    test(`no accepted request fails and no job stays claimed (${engine.name})`, {
      skip: engine.skip,
    }, async (t) => {
      const database = await freshDatabase(engine.name);
      const webhook = await slowWebhook();
      let server: ServerProcess | undefined;
      try {
        server = await startServer(database.url, {
          env: {
            LIMIT_HIGHLIGHTS_PER_DAY: '100000',
            LIMIT_TOKEN_PER_MINUTE: '100000',
            LIMIT_ANONYMOUS_PER_MINUTE: '100000',
            RSVP_WEBHOOK_URL: webhook.url,
            WORKER_INTERVAL_SECONDS: '1',
            WORKER_LEASE_SECONDS: '300',
            DRAIN_GRACE_MS: String(GRACE_MS),
          },
        });
        const members = await Promise.all(
          ['drain-a', 'drain-b'].map((name) =>
            runCliJson(database.url, [
              'member',
              'create',
              '--email',
              `${name}@test.example`,
              '--name',
              name,
              '--tier',
              'core',
            ]),
          ),
        );
        const tokens = await Promise.all(
          members.map((member) =>
            runCliJson(database.url, [
              'token',
              'mint',
              '--member',
              member.id,
              '--scopes',
              'events:submit_recap,events:rsvp',
            ]),
          ),
        );
        // RSVPs for the worker to hold: every token to every upcoming event of the demo community.
        const upcoming = (await (await fetch(`${server.baseUrl}/api/events/upcoming?limit=3`)).json()) as {
          events: { platform_url: string }[];
        };
        assert.ok(upcoming.events.length > 0, 'the demo community has upcoming events');
        for (const { token } of tokens)
          for (const event of upcoming.events) {
            const response: Response = await fetch(`${server.baseUrl}/api/events/rsvp`, {
              method: 'POST',
              headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
              body: JSON.stringify({ event_url: event.platform_url }),
            });
            assert.equal(response.status, 202, await response.text());
          }
        const queued = tokens.length * upcoming.events.length;
        // The worker has claimed the RSVPs and is waiting on the webhook for the first.
        const deadline = Date.now() + 10_000;
        while (webhook.received() === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        assert.ok(webhook.received() > 0, 'the worker started delivering before the signal');

        const signalledAt = Date.now();
        const stream = await streamAndSignal(server, tokens[0].token, engine.name);
        const exit = await server.exited;
        const drainMs = Date.now() - signalledAt;
        t.diagnostic(
          `${stream.acknowledged.size} writes acknowledged, ${stream.reads} reads, ${stream.notAccepted.length} refused before acceptance; exit after ${drainMs} ms`,
        );
        assert.deepEqual(exit, { code: 0, signal: null }, 'the drain ends in exit 0');
        assert.deepEqual(stream.unexpected, [], 'no accepted request was answered with a failure');
        assert.ok(stream.acknowledged.size >= SIGNAL_AFTER);
        t.diagnostic(
          `/readyz during the drain: ${stream.readyDuringDrain?.status ?? 'listener already closed'}`,
        );
        if (stream.readyDuringDrain) {
          assert.equal(stream.readyDuringDrain.status, 503);
          assert.equal(stream.readyDuringDrain.body.draining, true);
        }
        for (const refused of stream.notAccepted)
          assert.match(refused, /ECONNREFUSED|ECONNRESET|other side closed|SocketError/, refused);

        const after = await stored(database.url, engine.name);
        const unanswered = [...after.highlights].filter((id) => !stream.acknowledged.has(id));
        const lost = [...stream.acknowledged].filter((id) => !after.highlights.has(id));
        assert.deepEqual(unanswered, [], 'every stored write was answered 202');
        assert.deepEqual(lost, [], 'every 202 is stored');

        assert.equal(after.rsvps.length, queued);
        const claimed = after.rsvps.filter((row) => row.locked_until !== null);
        assert.deepEqual(claimed, [], 'the drain handed every lease back');
        assert.ok(
          after.rsvps.every((row) => row.status === 'queued'),
          'the unconfirmed RSVPs wait for the next worker',
        );
        assert.match(
          server.stdout(),
          /drained in \d+ ms \(grace period over\); \d+ worker leases given back/,
        );
      } finally {
        await server?.kill();
        webhook.server.closeAllConnections();
        webhook.server.close();
        await database.drop();
      }
    });
  }
});
