// What PostgreSQL's SQLSTATE codes (and SQLite's result codes) say about a failed statement, in one
// place: the write batcher (which failures to retry, which to pass on), the storage condition (when
// the database cannot write) and core/errors.ts (which answer a failure gets) all read them from here.

/** lock_not_available: a lock wait ran past lock_timeout (the write's bound: see WriteBatcher). */
export const LOCK_TIMEOUT_SQLSTATE = '55P03';

/** A statement that lost a lock cycle or a serialization race: the transaction may simply go again. */
export const LOST_RACE_SQLSTATES: ReadonlySet<string> = new Set([
  '40P01', // deadlock_detected: this transaction was chosen to end a lock cycle
  '40001', // serialization_failure
]);

/**
 * The transaction lost to concurrent writes and was rolled back: the database is up, the request
 * is not wrong, and it may succeed repeated (docs/api.md, errors).
 */
export const CONTENTION_SQLSTATES: ReadonlySet<string> = new Set([
  ...LOST_RACE_SQLSTATES,
  LOCK_TIMEOUT_SQLSTATE,
]);

/** The database is away or cannot take the statement now (with the whole class 08, see below). */
export const UNAVAILABLE_SQLSTATES: ReadonlySet<string> = new Set([
  '57P01', // admin_shutdown: terminating connection due to administrator command
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: the database system is starting up / shutting down
  '57014', // query_canceled: the statement timeout fired
  '53300', // too_many_connections
]);

/** The class of connection exceptions: every code in it says the connection failed. */
export const CONNECTION_EXCEPTION_CLASS = '08';

/**
 * Classes that speak of the connection or the server (away, out of resources, shutting down, a
 * system error), not of the statement: connection exception, insufficient resources, operator
 * intervention, system error.
 */
export const SERVER_CLASSES: ReadonlySet<string> = new Set([CONNECTION_EXCEPTION_CLASS, '53', '57', '58']);

/**
 * The database is up and answers, but cannot store a write now: its disk is full, its storage fails
 * or refuses writes, or (PostgreSQL) it is a standby or out of a resource. Repeated later, after an
 * operator freed space or the storage came back, the write may succeed.
 */
const UNWRITABLE_SQLSTATES: ReadonlySet<string> = new Set([
  '53000', // insufficient_resources
  '53100', // disk_full
  '53200', // out_of_memory
  '53400', // configuration_limit_exceeded
  '25006', // read_only_sql_transaction: a standby, or default_transaction_read_only
  '58030', // io_error
]);

/**
 * SQLite's primary result codes of the same kind; extended codes (SQLITE_IOERR_WRITE,
 * SQLITE_READONLY_DBMOVED, ...) start with them.
 */
const UNWRITABLE_SQLITE_CODES = ['SQLITE_FULL', 'SQLITE_IOERR', 'SQLITE_READONLY', 'SQLITE_CANTOPEN'];

/** Whether the error says the database cannot store writes now (see UNWRITABLE_SQLSTATES). */
export function isStorageUnwritable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  if (code.startsWith('SQLITE_')) return UNWRITABLE_SQLITE_CODES.some((prefix) => code.startsWith(prefix));
  return UNWRITABLE_SQLSTATES.has(code);
}

/** SQLite waited its busy_timeout for another process's write lock (SQLITE_BUSY and its extended codes). */
export function isSqliteBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/**
 * The statement carried text the database cannot hold: U+0000 in a text value, or a character
 * the encoding lacks. A request that got this far was not judged at the edge; it is still the
 * request's fault, so it is answered as bad input, never as a server failure.
 */
export const UNSTORABLE_TEXT_SQLSTATES: ReadonlySet<string> = new Set([
  '22021', // character_not_in_repertoire: "invalid byte sequence for encoding UTF8: 0x00"
  '22P05', // untranslatable_character: "unsupported Unicode escape sequence" in json/jsonb
]);
