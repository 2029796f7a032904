import type pg from 'pg';

/**
 * A statement's way of being sent, carried as its last parameter (StatementGroups takes it off and
 * never sends it): a flag in the parameters, not in the SQL text, so the text (and its prepared
 * name) is the same flagged or not and no code reads meaning out of SQL.
 */
export class StatementFlag {
  private readonly flag: string;
  constructor(flag: string) {
    this.flag = flag;
  }
  toString(): string {
    return this.flag;
  }
}

/**
 * A write whose caller needs no answer (no rows, no count). Inside a transaction such a write
 * waits on the connection and travels with the next statement (at the latest the COMMIT); if it
 * fails, that statement fails with its error, so the transaction still commits all or nothing.
 * PostgreSQL only: prepare and runDeferred (src/storage/engine/prepared.ts) give it to no other engine.
 */
export const DEFERRED_WRITE = new StatementFlag('deferred');

/**
 * A statement whose answer the caller awaits only after its transaction ends carries this as its
 * last parameter (not sent): inside a transaction it is held like a deferred write and travels with
 * the next statement (at the latest the COMMIT), and its answer comes back with that group's.
 * Awaiting that answer before the transaction ends waits for ever. It delivers that answer once the
 * group it travelled with succeeded (for a COMMIT, once the transaction committed), or the group's
 * error; a statement dropped unsent (rolled back before it left) is answered with an error too.
 */
export class LaterAnswer extends StatementFlag {
  readonly promise: Promise<Answer>;
  resolve!: (answer: Answer) => void;
  reject!: (error: unknown) => void;

  constructor() {
    super('answered later');
    this.promise = new Promise<Answer>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // The transaction's own failure is what its caller hears first; this one is awaited afterwards.
    this.promise.catch(() => {});
  }
}

type PgModule = typeof pg;
type Connection = {
  parse(config: { text: string; name: string; types: unknown[] }): void;
  bind(config: { portal: string; statement: string; values: unknown[] }): void;
  execute(config: { portal: string; rows: number }): void;
  describe(config: { type: 'P'; name: string }): void;
  on(event: 'parseComplete', listener: () => void): void;
  off(event: 'parseComplete', listener: () => void): void;
  /** Names the server confirmed parsing, and names whose Parse is on its way (pg's own records). */
  parsedStatements: Record<string, string | undefined>;
  submittedNamedStatements: Record<string, string | undefined>;
  stream: { cork?: () => void; uncork?: () => void };
};
type QueryHooks = {
  submit(connection: Connection): Error | null;
  handleCommandComplete(message: unknown, connection: Connection): void;
  handleRowDescription(message: unknown): void;
  handleDataRow(message: unknown): void;
};

/** pg's Result, which parses a held statement's rows as pg parses any answer's. */
type HeldResult = Answer & {
  addFields(fields: unknown[]): void;
  parseRow(fields: unknown[]): unknown;
  addRow(row: unknown): void;
  addCommandComplete(message: unknown): void;
};

interface Statement {
  text: string;
  values: unknown[];
  name?: string;
  later?: LaterAnswer;
}

/**
 * A statement's parameters without the flag its last one may be (a StatementFlag or LaterAnswer),
 * and that flag: checked on every statement, so it costs one comparison when there is none.
 */
export function unflagged(values: readonly unknown[]): {
  values: unknown[];
  flag: StatementFlag | undefined;
} {
  const last = values[values.length - 1];
  if (last instanceof StatementFlag) return { values: values.slice(0, -1), flag: last };
  return { values: values as unknown[], flag: undefined };
}

/** What a statement answered, as pg answers it (Kysely reads command, rowCount and rows). */
export interface Answer {
  command: string | null;
  rowCount: number | null;
  rows: unknown[];
}

/** SAVEPOINT, RELEASE [SAVEPOINT] and ROLLBACK TO [SAVEPOINT] of one plain savepoint name. */
const SAVEPOINT_STATEMENT =
  /^(savepoint|release(?: savepoint)?|rollback to(?: savepoint)?) ([a-z_][a-z0-9_]*)$/i;

const answered = (command: string | null): Promise<Answer> =>
  Promise.resolve({ command, rowCount: null, rows: [] });

/**
 * One pooled connection's statements, sent so that a transaction costs fewer round trips: its BEGIN
 * and each SAVEPOINT are held and written in front of the statement after them, and so are deferred
 * writes (they travel with the next statement, at the latest the RELEASE of their savepoint or the
 * COMMIT). PostgreSQL runs the whole group in order up to one Sync and skips the rest of it after an
 * error, so a held statement that fails stops the statement it travels with, which then reports that
 * error; nothing in a group runs outside the transaction (or savepoint) it belongs to. A transaction
 * opened and ended without a statement sends nothing.
 *
 * pg notes a statement name as parsed whenever a Parse of its active query completes; in a group
 * that may be a held statement's. The group keeps that record exact (see `group`), so after a failed
 * group the connection goes on (a write batch rolls back to its savepoint and continues).
 */
export class StatementGroups {
  private readonly pg: PgModule;
  private readonly client: pg.PoolClient;
  private held: Statement[] = [];
  private inTransaction = false;

  constructor(pgModule: PgModule, client: pg.PoolClient) {
    this.pg = pgModule;
    this.client = client;
  }

  /** `flag`: what the statement's last parameter carried (see unflagged), taken off its values. */
  query(statement: Statement, flag?: StatementFlag): Promise<Answer> {
    if (flag === undefined) return this.route(statement);
    if (flag === DEFERRED_WRITE) {
      if (!this.inTransaction) return this.route(statement);
      this.held.push(statement);
      return answered(null);
    }
    if (!(flag instanceof LaterAnswer))
      throw new Error(`a statement flag StatementGroups does not know: ${flag}`);
    const own = { ...statement, later: flag };
    if (!this.inTransaction) return this.route(own);
    this.held.push(own);
    return answered(null);
  }

  private route(statement: Statement): Promise<Answer> {
    const { text, values } = statement;
    if (text === 'begin' && values.length === 0 && !this.inTransaction) {
      this.inTransaction = true;
      // Named, like the COMMIT that ends a group: parsed once per connection, not at every transaction.
      this.held = [{ text, values, name: 'ac_begin' }];
      return answered('BEGIN');
    }
    if (text === 'commit' || text === 'rollback') return this.end(statement);
    if (this.inTransaction && values.length === 0) {
      const savepoint = SAVEPOINT_STATEMENT.exec(text);
      if (savepoint) return this.savepoint(statement, savepoint[1].toLowerCase(), savepoint[2]);
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

  /** Back to the pool; one left with statements never sent (a transaction never ended) is closed. */
  release(): void {
    const discard = this.held.length > 0 || this.inTransaction;
    dropped(this.held);
    this.held = [];
    this.inTransaction = false;
    this.client.release(discard || undefined);
  }

  /**
   * SAVEPOINT is held like BEGIN. RELEASE takes the held statements with it, so a deferred write of
   * the savepoint's work fails the RELEASE, inside that savepoint. ROLLBACK TO drops what is held
   * after the savepoint (it would undo it), and takes what is held before with it.
   */
  private savepoint(statement: Statement, verb: string, name: string): Promise<Answer> {
    const kind = verb.startsWith('release')
      ? 'release'
      : verb.startsWith('rollback')
        ? 'rollback_to'
        : 'savepoint';
    const named = { ...statement, name: `ac_${kind}_${name.toLowerCase()}` };
    if (kind === 'savepoint') {
      this.held.push(named);
      return answered('SAVEPOINT');
    }
    // What is held after the savepoint (it is the last one held of its name, or was sent) would be
    // undone by ROLLBACK TO: it is dropped unsent.
    const savepointName = `ac_savepoint_${name.toLowerCase()}`;
    const kept =
      kind === 'release'
        ? this.held.length
        : this.held.map((held) => held.name).lastIndexOf(savepointName) + 1;
    const held = this.held.slice(0, kept);
    dropped(this.held.slice(kept));
    this.held = [];
    return held.length === 0 ? this.send(named) : this.group(held, named);
  }

  private end(statement: Statement): Promise<Answer> {
    const held = this.held;
    this.held = [];
    this.inTransaction = false;
    const command = statement.text.toUpperCase();
    // Rolled back: writes that never left are simply dropped.
    if (command === 'ROLLBACK') dropped(held);
    // The BEGIN still held: the server never heard of this transaction.
    if (held[0]?.text === 'begin' && (command === 'ROLLBACK' || held.length === 1)) return answered(command);
    if (command === 'ROLLBACK' || held.length === 0) return this.send(statement);
    return this.group(held, { ...statement, name: 'ac_commit' });
  }

  private send(statement: Statement): Promise<Answer> {
    return new Promise<Answer>((resolve, reject) => {
      const query = this.newQuery(statement, (error, answer) => {
        if (error) {
          statement.later?.reject(error);
          reject(error);
        } else {
          statement.later?.resolve(answer);
          resolve(answer);
        }
      });
      this.client.query(query as unknown as pg.Submittable);
    });
  }

  /**
   * pg's Query made from the text (pg copies a config object property by property into a slow
   * dictionary-shaped object on every query; a text it takes as is), with the name set after. Our
   * own callback replaces pg's promise, so a failed statement's stack ends in the socket read (as a
   * grouped statement's always did) instead of being captured again at the answer.
   */
  private newQuery(
    statement: Statement,
    done: (error: Error | undefined, answer: Answer) => void,
    extended = false,
  ): QueryHooks {
    const query = new this.pg.Query(
      statement.text,
      statement.values,
      done as never,
    ) as unknown as QueryHooks & {
      name?: string;
      queryMode?: string;
    };
    if (statement.name) query.name = statement.name;
    if (extended) query.queryMode = 'extended';
    return query;
  }

  /**
   * `held` written in front of `main`, one Sync for all: one round trip, `main`'s answer. A held
   * statement answered later is also described, so its rows come back with their columns; its
   * answer is given once the whole group succeeded.
   */
  private group(held: Statement[], main: Statement): Promise<Answer> {
    const { utils, Result } = this.pg as unknown as {
      utils: { prepareValue(value: unknown): unknown };
      Result: new () => HeldResult;
    };
    let unanswered = held.length;
    let parses: ParseRecord | undefined;
    const results = held.map((statement) => (statement.later ? new Result() : undefined));
    const current = () => (unanswered > 0 ? results[held.length - unanswered] : undefined);
    return new Promise<Answer>((resolve, reject) => {
      // Extended protocol even without parameters: a COMMIT must share the held statements' Sync.
      const query = this.newQuery(
        main,
        (error, answer) => {
          parses?.finish();
          if (error) {
            for (const statement of [...held, main]) statement.later?.reject(error);
            reject(error);
            return;
          }
          for (const [i, statement] of held.entries()) statement.later?.resolve(results[i] as HeldResult);
          main.later?.resolve(answer);
          resolve(answer);
        },
        true,
      );
      const submit = query.submit.bind(query);
      const complete = query.handleCommandComplete.bind(query);
      const row = query.handleDataRow.bind(query);
      const columns = query.handleRowDescription.bind(query);
      query.handleCommandComplete = (message, connection) => {
        if (unanswered === 0) return complete(message, connection);
        current()?.addCommandComplete(message);
        unanswered--;
      };
      query.handleRowDescription = (message) => {
        if (unanswered === 0) columns(message);
        else current()?.addFields((message as { fields: unknown[] }).fields);
      };
      query.handleDataRow = (message) => {
        if (unanswered === 0) return row(message);
        const result = current();
        result?.addRow(result.parseRow((message as { fields: unknown[] }).fields));
      };
      query.submit = (connection) => {
        let mapped: unknown[][];
        try {
          mapped = held.map((statement) => statement.values.map((value) => utils.prepareValue(value)));
        } catch (error) {
          return error as Error;
        }
        const inGroup: Statement[] = [];
        connection.stream.cork?.();
        try {
          held.forEach((statement, i) => {
            if (!isKnown(connection, statement)) {
              connection.parse({ text: statement.text, name: statement.name ?? '', types: [] });
              if (statement.name) connection.submittedNamedStatements[statement.name] = statement.text;
              inGroup.push(statement);
            }
            connection.bind({ portal: '', statement: statement.name ?? '', values: mapped[i] });
            if (statement.later) connection.describe({ type: 'P', name: '' });
            connection.execute({ portal: '', rows: 0 });
          });
          if (inGroup.length > 0) parses = new ParseRecord(connection, inGroup, main);
          return submit(connection);
        } finally {
          connection.stream.uncork?.();
        }
      };
      this.client.query(query as unknown as pg.Submittable);
    });
  }
}

/** Statements dropped unsent: the answers some of them promised are errors. */
function dropped(statements: Statement[]): void {
  for (const statement of statements)
    statement.later?.reject(new Error('the statement was rolled back before it was sent'));
}

/** As pg decides whether a named statement needs a Parse: parsed, or its Parse already sent. */
function isKnown(connection: Connection, statement: Statement): boolean {
  const { name } = statement;
  if (name === undefined) return false;
  return (
    connection.parsedStatements[name] !== undefined || connection.submittedNamedStatements[name] !== undefined
  );
}

/**
 * Keeps pg's record of parsed names exact through a group. The server confirms each Parse in the
 * order sent (held statements first, then the main one if pg parses it); pg credits every
 * confirmation to the main statement's name. Here each is credited to its own statement, and what
 * was never confirmed (the group failed first) is forgotten, so the next use parses it again.
 */
class ParseRecord {
  private readonly connection: Connection;
  private readonly pending: Statement[];
  private readonly main: Statement;
  private readonly mainParsedBefore: boolean;
  private readonly listener = () => this.confirmed();

  constructor(connection: Connection, heldParses: Statement[], main: Statement) {
    this.connection = connection;
    this.main = main;
    this.mainParsedBefore = main.name !== undefined && connection.parsedStatements[main.name] !== undefined;
    // pg's own Parse of the main statement, if it sends one, comes after the held ones.
    this.pending = isKnown(connection, main) ? [...heldParses] : [...heldParses, main];
    connection.on('parseComplete', this.listener);
  }

  /** Runs after pg's own handler of the same message. */
  private confirmed(): void {
    const statement = this.pending.shift();
    if (statement === undefined || statement === this.main) return;
    const { parsedStatements, submittedNamedStatements } = this.connection;
    const mainName = this.main.name;
    if (mainName !== undefined && !this.mainParsedBefore) {
      delete parsedStatements[mainName];
      if (this.pending.includes(this.main)) submittedNamedStatements[mainName] = this.main.text;
    }
    if (statement.name !== undefined) {
      parsedStatements[statement.name] = statement.text;
      delete submittedNamedStatements[statement.name];
    }
  }

  finish(): void {
    this.connection.off('parseComplete', this.listener);
    for (const statement of this.pending)
      if (statement !== this.main && statement.name !== undefined)
        delete this.connection.submittedNamedStatements[statement.name];
  }
}
