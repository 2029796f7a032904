import {
  type Compilable,
  type CompiledQuery,
  type Kysely,
  PostgresAdapter,
  type RawBuilder,
  type RootOperationNode,
} from 'kysely';
import type { Db, Executor } from '../schema.ts';
import { DEFERRED_WRITE, LaterAnswer } from './statement-groups.ts';

const SENTINEL = '\u0000param:';

/** Runs one statement on the embedded engine's connection at once: its rows (none for a plain write). */
export type DirectRunner = (sql: string, parameters: readonly unknown[]) => unknown[];

/**
 * The embedded engine runs statements synchronously on its one connection, so a prepared statement
 * may skip Kysely's driver (its connection lock, result plugins and promise hops) in two cases:
 * - inside a transaction, which holds the connection from its BEGIN to its COMMIT: the same
 *   statement on the same connection (a highlight write runs five such statements);
 * - a read marked `directRead` on the database itself. Reads that overlap an open transaction on
 *   the one connection can see its uncommitted rows; the only reads taking this path (token
 *   lookups) are safe with that.
 * Keyed by the dialect adapter, which the database and its transactions share. PostgreSQL registers
 * none: its statements always go through Kysely.
 */
const directRunners = new WeakMap<object, DirectRunner>();

export function registerDirectRunner(db: Db, runner: DirectRunner): void {
  directRunners.set(db.getExecutor().adapter, runner);
}

/**
 * A query that must not be prepared: the lookup cache is emptied by a write to what it holds as the
 * write is built and when its result comes back through Kysely; a query compiled once is built once
 * and may skip Kysely when run. Registered per database (its adapter); prepare refuses such a query
 * at its compilation.
 */
const unpreparable = new WeakMap<object, (node: RootOperationNode) => boolean>();

export function refuseToPrepare(db: Db, refuses: (node: RootOperationNode) => boolean): void {
  unpreparable.set(db.getExecutor().adapter, refuses);
}

/** Whether statements on `executor` go to PostgreSQL (some have a one-statement form there). */
export function onPostgres(executor: Executor): boolean {
  return executor.getExecutor().adapter instanceof PostgresAdapter;
}

/** Stand-in for the nth argument of a prepared query. */
export function arg(index: number): string {
  return `${SENTINEL}${index}`;
}

/** The same, where the builder expects a number (a bigint column, a limit). */
export function numberArg(index: number): number {
  return arg(index) as unknown as number;
}

/**
 * A query built and compiled once per database and then executed with fresh arguments: the hot
 * paths (token lookup, rate counters) skip Kysely's builder and compiler on every request, while
 * still running through its driver (connection pool or SQLite's connection lock and transactions).
 */
export function prepare<Row>(
  build: (db: Db) => Compilable<Row>,
  options: {
    directRead?: boolean;
    /** A write that answers nothing: inside a PostgreSQL transaction it travels with the next statement. */
    deferred?: boolean;
    /** See prepareAnsweredLater: the last argument is the LaterAnswer, passed on unsent. */
    answeredLater?: boolean;
  } = {},
) {
  // Keyed by the dialect adapter: the database and its transactions share one, and one SQL text.
  // `deferred`: the flag goes along, to PostgreSQL only (statement groups); decided at compilation.
  const compiled = new WeakMap<object, { query: CompiledQuery<Row>; deferred: boolean }>();
  return async (executor: Executor, ...args: unknown[]): Promise<Row[]> => {
    const adapter = executor.getExecutor().adapter;
    let prepared = compiled.get(adapter);
    if (!prepared) {
      const query = build(executor as Db).compile();
      if (unpreparable.get(adapter)?.(query.query))
        throw new Error(`a write of a table the lookup cache holds cannot be prepared: ${query.sql}`);
      prepared = { query, deferred: options.deferred === true && adapter instanceof PostgresAdapter };
      compiled.set(adapter, prepared);
    }
    const { query } = prepared;
    const parameters = query.parameters.map((p) =>
      typeof p === 'string' && p.startsWith(SENTINEL) ? args[Number(p.slice(SENTINEL.length))] : p,
    );
    if (options.answeredLater) parameters.push(args.at(-1));
    else if (prepared.deferred) parameters.push(DEFERRED_WRITE);
    if (options.directRead || executor.isTransaction) {
      const run = directRunners.get(adapter);
      if (run) return run(query.sql, parameters) as Row[];
    }
    const result = await executor.executeQuery<Row>({ ...query, parameters });
    return result.rows;
  };
}

/**
 * Runs `query` as a deferred write (see DEFERRED_WRITE): on PostgreSQL, inside a transaction, it
 * travels with the next statement; elsewhere it simply runs.
 */
export async function runDeferred(executor: Kysely<any>, query: RawBuilder<unknown>): Promise<void> {
  const compiled = query.compile(executor);
  if (!(executor.getExecutor().adapter instanceof PostgresAdapter)) {
    await executor.executeQuery(compiled);
    return;
  }
  await executor.executeQuery({ ...compiled, parameters: [...compiled.parameters, DEFERRED_WRITE] });
}

/**
 * A query compiled once per database, run on a DirectRunner (the embedded engine's connection, as
 * Database.writeAtOnce hands it): no promise at all. It never passes through Kysely, so, as with
 * prepare, a write of a table the lookup cache holds is refused.
 */
export function prepareDirect<Row>(build: (db: Db) => Compilable<Row>) {
  const compiled = new WeakMap<object, CompiledQuery<Row>>();
  return (db: Db, run: DirectRunner, ...args: unknown[]): Row[] => {
    const adapter = db.getExecutor().adapter;
    let query = compiled.get(adapter);
    if (!query) {
      query = build(db).compile();
      if (unpreparable.get(adapter)?.(query.query))
        throw new Error(`a write of a table the lookup cache holds cannot be prepared: ${query.sql}`);
      compiled.set(adapter, query);
    }
    const parameters = query.parameters.map((p) =>
      typeof p === 'string' && p.startsWith(SENTINEL) ? args[Number(p.slice(SENTINEL.length))] : p,
    );
    return run(query.sql, parameters) as Row[];
  };
}

/**
 * A prepared statement (PostgreSQL only) whose rows are awaited after its transaction ends: inside
 * one it travels with the next statement, at the latest the COMMIT, so a transaction of this one
 * statement costs one round trip (src/storage/engine/statement-groups.ts). `rows` settles with the group it
 * travelled with: its rows once that group succeeded, else the group's error.
 */
export function prepareAnsweredLater<Row>(build: (db: Db) => Compilable<Row>) {
  const run = prepare(build, { answeredLater: true });
  return async (executor: Executor, ...args: unknown[]): Promise<{ rows: Promise<Row[]> }> => {
    const later = new LaterAnswer();
    await run(executor, ...args, later);
    const rows = later.promise.then((answer) => answer.rows as Row[]);
    // Awaited only once the transaction committed; its failure is heard from the transaction first.
    rows.catch(() => {});
    return { rows };
  };
}
