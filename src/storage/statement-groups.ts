import type pg from 'pg';

/**
 * Marks a write whose caller needs no answer (no rows, no count). Inside a transaction such a write
 * waits on the connection and travels with the next statement (at the latest the COMMIT); if it
 * fails, that statement fails with its error, so the transaction still commits all or nothing.
 * A comment, so the same text runs unchanged on the embedded engine and outside a transaction.
 */
export const DEFERRED_WRITE = '/* deferred */ ';

type PgModule = typeof pg;
type Connection = {
  parse(config: { text: string; name: string; types: unknown[] }): void;
  bind(config: { portal: string; statement: string; values: unknown[] }): void;
  execute(config: { portal: string; rows: number }): void;
  parsedStatements: Record<string, string | undefined>;
  stream: { cork?: () => void; uncork?: () => void };
};
type QueryHooks = {
  submit(connection: Connection): Error | null;
  handleCommandComplete(message: unknown, connection: Connection): void;
  handleDataRow(message: unknown): void;
};

interface Statement {
  text: string;
  values: unknown[];
  name?: string;
}

/** What a statement answered, as pg answers it (Kysely reads command, rowCount and rows). */
interface Answer {
  command: string | null;
  rowCount: number | null;
  rows: unknown[];
}

const answered = (command: string | null): Promise<Answer> =>
  Promise.resolve({ command, rowCount: null, rows: [] });

/**
 * One pooled connection's statements, sent so that a transaction costs fewer round trips: its BEGIN
 * is held and written in front of its first statement, and deferred writes are held and written in
 * front of the statement after them (typically the COMMIT). PostgreSQL runs the whole group in order
 * up to one Sync and skips the rest of it after an error, so a held statement that fails stops the
 * statement it travels with, which then reports that error; nothing in a group runs outside the
 * transaction it belongs to. A transaction opened and ended without a statement sends nothing.
 *
 * After a group fails, pg's record of which named statements this connection has parsed may be
 * wrong (it notes a name when any parse of the group completes), so the connection is discarded
 * when it goes back to the pool rather than reused.
 */
export class StatementGroups {
  private readonly pg: PgModule;
  private readonly client: pg.PoolClient;
  private held: Statement[] = [];
  private inTransaction = false;
  private uncertain = false;

  constructor(pgModule: PgModule, client: pg.PoolClient) {
    this.pg = pgModule;
    this.client = client;
  }

  query(statement: Statement): Promise<Answer> {
    const { text, values } = statement;
    if (text === 'begin' && values.length === 0 && !this.inTransaction) {
      this.inTransaction = true;
      // Named, like the COMMIT that ends a group: parsed once per connection, not at every transaction.
      this.held = [{ text, values, name: 'ac_begin' }];
      return answered('BEGIN');
    }
    if (text === 'commit' || text === 'rollback') return this.end(statement);
    if (this.inTransaction && text.startsWith(DEFERRED_WRITE)) {
      this.held.push(statement);
      return answered(null);
    }
    if (this.held.length === 0) return this.send(statement);
    const held = this.held;
    this.held = [];
    // A statement without parameters may hold several commands, which one extended-protocol message
    // cannot carry: the held ones go first as a group of their own, then it goes as usual.
    if (values.length === 0) {
      const last = held.pop() as Statement;
      return this.group(held, last).then(() => this.send(statement));
    }
    return this.group(held, statement);
  }

  /** Back to the pool; a connection whose state is uncertain (a failed group) is closed instead. */
  release(): void {
    const discard = this.uncertain || this.held.length > 0;
    this.held = [];
    this.inTransaction = false;
    this.uncertain = false;
    this.client.release(discard || undefined);
  }

  private end(statement: Statement): Promise<Answer> {
    const held = this.held;
    this.held = [];
    this.inTransaction = false;
    const command = statement.text.toUpperCase();
    // The BEGIN still held: the server never heard of this transaction.
    if (held[0]?.text === 'begin' && (command === 'ROLLBACK' || held.length === 1)) return answered(command);
    // Rolled back: writes that never left are simply dropped.
    if (command === 'ROLLBACK' || held.length === 0) return this.send(statement);
    return this.group(held, { ...statement, name: 'ac_commit' });
  }

  private send(statement: Statement): Promise<Answer> {
    const { text, values, name } = statement;
    return (
      name ? this.client.query({ name, text, values }) : this.client.query(text, values)
    ) as Promise<Answer>;
  }

  /** `held` written in front of `main`, one Sync for all: one round trip, `main`'s answer. */
  private group(held: Statement[], main: Statement): Promise<Answer> {
    const { utils } = this.pg as unknown as { utils: { prepareValue(value: unknown): unknown } };
    let unanswered = held.length;
    return new Promise<Answer>((resolve, reject) => {
      const query = new this.pg.Query(
        // Extended protocol even without parameters: a COMMIT must share the held statements' Sync.
        { text: main.text, values: main.values, name: main.name, queryMode: 'extended' } as pg.QueryConfig,
        undefined,
        (error: Error | undefined, answer: unknown) => {
          if (!error) return resolve(answer as Answer);
          this.uncertain = true;
          reject(error);
        },
      ) as unknown as QueryHooks;
      const submit = query.submit.bind(query);
      const complete = query.handleCommandComplete.bind(query);
      const row = query.handleDataRow.bind(query);
      query.handleCommandComplete = (message, connection) => {
        if (unanswered > 0) unanswered--;
        else complete(message, connection);
      };
      query.handleDataRow = (message) => {
        if (unanswered === 0) row(message);
      };
      query.submit = (connection) => {
        let mapped: unknown[][];
        try {
          mapped = held.map((statement) => statement.values.map((value) => utils.prepareValue(value)));
        } catch (error) {
          return error as Error;
        }
        connection.stream.cork?.();
        try {
          held.forEach((statement, i) => {
            const parsed =
              statement.name !== undefined && connection.parsedStatements[statement.name] === statement.text;
            if (!parsed) {
              connection.parse({ text: statement.text, name: statement.name ?? '', types: [] });
              if (statement.name) connection.parsedStatements[statement.name] = statement.text;
            }
            connection.bind({ portal: '', statement: statement.name ?? '', values: mapped[i] });
            connection.execute({ portal: '', rows: 0 });
          });
          return submit(connection);
        } finally {
          connection.stream.uncork?.();
        }
      };
      this.client.query(query as unknown as pg.Submittable);
    });
  }
}
