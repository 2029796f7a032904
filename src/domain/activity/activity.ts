import { pooledRandomHex } from '../../secrets.ts';
import { arg, numberArg, prepare } from '../../storage/engine/prepared.ts';
import type { Executor } from '../../storage/schema.ts';
import { transact, type WritePort } from '../../storage/transactions.ts';

export interface ActivityRecord {
  memberId: string;
  operation: string;
  surface: string;
  tokenPrefix: string;
  status: number;
  /** `ok`, or the error code the call ended with. */
  outcome: string;
  at: number;
}

/** The last millisecond's id prefix: under load many calls share one (base 36 is slow to print). */
let lastAt = Number.NaN;
let lastPrefix = '';

/** Ids sort by time (base-36 milliseconds, fixed width) so the newest-first read is an index scan. */
function activityId(at: number): string {
  if (at !== lastAt) {
    lastAt = at;
    lastPrefix = at.toString(36).padStart(10, '0');
  }
  return `${lastPrefix}${pooledRandomHex(5)}`;
}

/** A new activity id for a call at `at`: the pipeline picks it before the call, to find the row after. */
export function newActivityId(at: number): string {
  return activityId(at);
}

// Written by every agent call: compiled once (src/storage/engine/prepared.ts), not built at each call, and
// deferred: nothing waits for its answer, so on PostgreSQL it travels with the COMMIT.
const insertRow = prepare(
  (db) =>
    db.insertInto('activity').values({
      id: arg(0),
      member_id: arg(1),
      at: numberArg(2),
      operation: arg(3),
      surface: arg(4),
      token_prefix: arg(5),
      status: numberArg(6),
      outcome: arg(7),
    }),
  { deferred: true },
);

/** Writes one call's row in the transaction given (the operation's own, so the two commit together). */
export async function insertActivity(trx: Executor, id: string, record: ActivityRecord): Promise<void> {
  await insertRow(
    trx,
    id,
    record.memberId,
    record.at,
    record.operation,
    record.surface,
    record.tokenPrefix,
    record.status,
    record.outcome,
  );
}

/** Records one call an agent token made, in a write unit of its own (a read, or a call that failed). */
export async function recordActivity(port: WritePort, record: ActivityRecord): Promise<void> {
  await transact(port, (trx) => insertActivity(trx, activityId(record.at), record));
}

/**
 * Corrects the row written inside the operation's transaction when the call ended otherwise than
 * that row assumed (another success status, or a failure after the commit).
 */
export async function correctActivity(
  db: Executor,
  id: string,
  outcome: Pick<ActivityRecord, 'status' | 'outcome'>,
): Promise<void> {
  await db
    .updateTable('activity')
    .set({ status: outcome.status, outcome: outcome.outcome })
    .where('id', '=', id)
    .execute();
}

export interface ActivityView {
  operation: string;
  at: string;
  surface: 'rest' | 'mcp' | 'a2a';
  token_prefix: string;
  status: number;
  outcome: string;
}

// Read on every activity call of every surface: compiled once (src/storage/engine/prepared.ts).
const recentRows = prepare((db) =>
  db
    .selectFrom('activity')
    .selectAll()
    .where('member_id', '=', arg(0))
    .orderBy('id', 'desc')
    .limit(numberArg(1)),
);

export async function recentActivity(
  deps: { db: Executor },
  memberId: string,
  limit: number,
): Promise<ActivityView[]> {
  const rows = await recentRows(deps.db, memberId, limit);
  return rows.map((row) => ({
    operation: row.operation,
    at: new Date(Number(row.at)).toISOString(),
    surface: row.surface as ActivityView['surface'],
    token_prefix: row.token_prefix,
    status: Number(row.status),
    outcome: row.outcome,
  }));
}
