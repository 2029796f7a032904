// Keeps a PostgreSQL instance's lookup cache exact across instances. One connection of its own
// LISTENs on the channel the tables' triggers notify (migration 0014); each notification empties the
// cache. The cache serves only while notifications are known to reach that connection: it starts
// suspended, resumes (empty) once LISTEN is in place and a first heartbeat came back, and is
// suspended the moment the connection fails or a heartbeat goes unanswered for HEARTBEAT_MS. So a
// change committed anywhere reaches this instance's cache within the notification's delivery
// (milliseconds), or within about twice HEARTBEAT_MS when the connection dies silently. See
// docs/decisions.md#tokens.
// The same connection LISTENs on the event log's channel too (engine/append-feed.ts): an instance has
// one listening connection, whatever it waits for.
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { AUTH_CHANGES_CHANNEL } from '../migrations/0013-auth-notify.ts';
import { type CounterStoreLog, stderrLog } from '../window-counters.ts';
import { type AppendFeed, EVENT_LOG_CHANNEL } from './append-feed.ts';
import type { InvalidatingCache } from './invalidating-cache.ts';

/** How often the listening connection is asked to answer; no answer within as long suspends the cache. */
const HEARTBEAT_MS = 1000;
const RECONNECT_MAX_MS = 2000;
/** The listening connection's application_name, as pg_stat_activity shows it. */
export const AUTH_LISTENER_NAME = 'agent-commons change listener';

export interface AuthListener {
  /** Settles once LISTEN is first in place or the first attempt failed (the start waits for it). */
  readonly firstAttempt: Promise<void>;
  useLog(log: CounterStoreLog): void;
  stop(): Promise<void>;
}

export function listenForAuthChanges(
  newClient: () => Promise<pg.Client>,
  cache: InvalidatingCache<unknown>,
  appends?: AppendFeed,
): AuthListener {
  let log: CounterStoreLog = stderrLog;
  let current: pg.Client | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let retry: NodeJS.Timeout | undefined;
  let stopped = false;
  let failures = 0;
  let everListened = false;

  const drop = (client: pg.Client, cause: string) => {
    if (current !== client) return;
    current = undefined;
    clearInterval(heartbeat);
    cache.suspend();
    log.warn({ cause }, 'lookup cache suspended: the PostgreSQL change listener is down');
    client.end().catch(() => {});
    schedule();
  };

  const schedule = () => {
    if (stopped || retry) return;
    const delay = Math.min(RECONNECT_MAX_MS, 100 * 2 ** Math.min(failures, 5));
    retry = setTimeout(() => {
      retry = undefined;
      void connect();
    }, delay);
    retry.unref();
  };

  const connect = async (): Promise<void> => {
    let client: pg.Client | undefined;
    // The heartbeat is a notification this connection sends itself on a channel of its own: an
    // answer proves notifications reach it (through a pooler in transaction mode they would not).
    const ownChannel = `agent_commons_alive_${randomBytes(6).toString('hex')}`;
    let answered: (() => void) | undefined;
    try {
      client = await newClient();
      const attempt = client;
      attempt.on('error', (error) => drop(attempt, error.message));
      attempt.on('end', () => drop(attempt, 'connection ended'));
      attempt.on('notification', (message) => {
        if (message.channel === AUTH_CHANGES_CHANNEL) cache.invalidate();
        else if (message.channel === EVENT_LOG_CHANNEL) appends?.appended(message.payload ?? '');
        else if (message.channel === ownChannel) answered?.();
      });
      const beat = () =>
        new Promise<void>((resolve, reject) => {
          const late = setTimeout(() => reject(new Error('heartbeat unanswered')), HEARTBEAT_MS);
          answered = () => {
            clearTimeout(late);
            answered = undefined;
            resolve();
          };
          attempt.query('select pg_notify($1, $2)', [ownChannel, '']).catch(reject);
        });
      await attempt.connect();
      await attempt.query(`listen ${AUTH_CHANGES_CHANNEL}`);
      if (appends) await attempt.query(`listen ${EVENT_LOG_CHANNEL}`);
      await attempt.query(`listen ${ownChannel}`);
      await beat();
      if (stopped) {
        await attempt.end();
        return;
      }
      current = attempt;
      failures = 0;
      cache.resume();
      // Nothing was told while the connection was down: every waiter reads its log again.
      appends?.appendedAnywhere();
      if (everListened) log.info({}, 'lookup cache resumed: the PostgreSQL change listener is back');
      everListened = true;
      let beating = false;
      heartbeat = setInterval(() => {
        if (beating) return;
        beating = true;
        beat().then(
          () => {
            beating = false;
          },
          (error: Error) => drop(attempt, error.message),
        );
      }, HEARTBEAT_MS);
      heartbeat.unref();
    } catch {
      failures++;
      client?.end().catch(() => {});
      schedule();
    }
  };

  const firstAttempt = connect();
  return {
    firstAttempt,
    useLog(next) {
      log = next;
    },
    async stop() {
      stopped = true;
      clearTimeout(retry);
      clearInterval(heartbeat);
      const client = current;
      current = undefined;
      cache.suspend();
      await client?.end().catch(() => {});
    },
  };
}
