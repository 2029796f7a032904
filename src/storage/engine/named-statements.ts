import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pg from 'pg';
import type { StorageCondition } from '../storage-condition.ts';
import { StatementGroups, unflagged } from './statement-groups.ts';

/** Distinct statement texts given a name; past it a text runs unnamed (bounded per connection). */
const MAX_NAMED = 500;

/**
 * A selection by `*` is left unnamed: a prepared plan refuses to run once another instance's
 * migration changed the table's columns ("cached plan must not change result type"), where an
 * unnamed statement simply answers the new columns.
 */
const STAR_SELECTION = /(^|[\s,(])("?\w+"?\.)?\*(\s|,|$)/;

const names = new Map<string, string | null>();

function nameOf(text: string): string | undefined {
  let name = names.get(text);
  if (name === undefined) {
    name = names.size < MAX_NAMED && !STAR_SELECTION.test(text) ? `ac_${names.size}` : null;
    names.set(text, name);
  }
  return name ?? undefined;
}

/**
 * The pool as Kysely sees it, with each parameterized statement prepared once per connection under
 * a name: PostgreSQL then parses and plans it once instead of at every execution, and the driver
 * sends no Parse message after the first. The statements are the service's own (a bounded set of
 * texts), never text from a request. A transaction's statements also travel in groups
 * (src/storage/engine/statement-groups.ts).
 */
export function namingPool(pool: pg.Pool, pgModule: typeof pg, storage?: StorageCondition): PostgresPool {
  return {
    connect: async () => namingClient(await pool.connect(), pgModule, storage),
    end: () => pool.end(),
    options: pool.options,
  };
}

/** One wrapper per pooled connection, made at its first checkout (a write checks one out per request). */
const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>();

function namingClient(
  client: pg.PoolClient,
  pgModule: typeof pg,
  storage: StorageCondition | undefined,
): PostgresPoolClient {
  let wrapper = wrappers.get(client);
  if (!wrapper) {
    wrapper = wrap(client, new StatementGroups(pgModule, client), storage);
    wrappers.set(client, wrapper);
  }
  return wrapper;
}

/** Each statement's failure, and a COMMIT's success, is told to the storage condition. */
function wrap(
  client: pg.PoolClient,
  groups: StatementGroups,
  storage: StorageCondition | undefined,
): PostgresPoolClient {
  const failed = (error: unknown) => storage?.failed(error);
  const committed = () => storage?.committed();
  return {
    query: ((text: string | pg.Submittable, values: readonly unknown[]) => {
      if (typeof text !== 'string') return client.query(text);
      const { values: sent, flag } = unflagged(values);
      const name = sent.length > 0 ? nameOf(text) : undefined;
      const answer = groups.query({ text, values: sent, name }, flag);
      answer.then(text === 'commit' ? committed : undefined, failed);
      return answer;
    }) as unknown as PostgresPoolClient['query'],
    release: () => groups.release(),
    // Kysely reads the backend's process id (an undocumented member of pg's Client) to cancel.
    get processID() {
      return (client as unknown as { processID?: number }).processID;
    },
  } as PostgresPoolClient & { processID?: number };
}
