import { pooledRandomHex } from '../../secrets.ts';
import { type ActivityQuery, type ActivityRow, activity, activityIdPrefix } from '../../storage/activity.ts';
import { activityDays } from '../../storage/rollups.ts';
import type { Executor } from '../../storage/schema.ts';
import { transact, type WritePort } from '../../storage/transactions.ts';

/** One call's row: `outcome` is `ok`, or the error code the call ended with. */
export type ActivityRecord = ActivityRow;

/** The last millisecond's id prefix: under load many calls share one (base 36 is slow to print). */
let lastAt = Number.NaN;
let lastPrefix = '';

/** Ids sort by time (base-36 milliseconds, fixed width) so the newest-first read is an index scan. */
function activityId(at: number): string {
  if (at !== lastAt) {
    lastAt = at;
    lastPrefix = activityIdPrefix(at);
  }
  return `${lastPrefix}${pooledRandomHex(5)}`;
}

/** A new activity id for a call at `at`: the pipeline picks it before the call, to find the row after. */
export function newActivityId(at: number): string {
  return activityId(at);
}

/**
 * Writes one call's row in the transaction given (the operation's own, so the two commit together),
 * and counts it in its day's rollup there too: the dashboard's numbers commit or roll back with it.
 */
export async function insertActivity(trx: Executor, id: string, record: ActivityRecord): Promise<void> {
  await activity.insert(trx, id, record);
  await activityDays.count(trx, record);
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
  port: WritePort & { db: Executor },
  id: string,
  outcome: Pick<ActivityRecord, 'status' | 'outcome' | 'target'>,
  written: Pick<ActivityRecord, 'status' | 'at' | 'surface' | 'operation'>,
): Promise<void> {
  const refused = outcome.status >= 400;
  if (refused === written.status >= 400) return activity.correct(port.db, id, outcome);
  // The row moves into or out of its day's refusals: both change in one transaction.
  await transact(port, async (trx) => {
    await activity.correct(trx, id, outcome);
    await activityDays.recount(trx, written, refused ? 1 : -1);
  });
}

export interface ActivityView {
  operation: string;
  at: string;
  surface: 'rest' | 'mcp' | 'a2a';
  token_prefix: string;
  status: number;
  outcome: string;
}

export async function recentActivity(
  deps: { db: Executor },
  memberId: string,
  limit: number,
): Promise<ActivityView[]> {
  const rows = await activity.recent(deps.db, memberId, limit);
  return rows.map((row) => ({
    operation: row.operation,
    at: new Date(Number(row.at)).toISOString(),
    surface: row.surface as ActivityView['surface'],
    token_prefix: row.token_prefix,
    status: Number(row.status),
    outcome: row.outcome,
  }));
}

/** One row of the member's activity page: the call, and what it touched. */
export interface ActivityEntry extends ActivityView {
  id: string;
  target: { kind: string; id: string } | undefined;
}

export type { ActivityQuery };

/** What a row's target column names (`kind:id`), or undefined. */
function targetOf(column: string | null): ActivityEntry['target'] {
  if (!column) return undefined;
  const split = column.indexOf(':');
  return split > 0 ? { kind: column.slice(0, split), id: column.slice(split + 1) } : undefined;
}

/** One page of the member's calls, newest first, filtered; `next` is the cursor of the page after. */
export async function activityPage(
  deps: { db: Executor },
  memberId: string,
  query: ActivityQuery,
): Promise<{ entries: ActivityEntry[]; next: string | undefined }> {
  const rows = await activity.page(deps.db, memberId, { ...query, limit: query.limit + 1 });
  const shown = rows.slice(0, query.limit);
  return {
    entries: shown.map((row) => ({
      id: row.id,
      operation: row.operation,
      at: new Date(Number(row.at)).toISOString(),
      surface: row.surface as ActivityView['surface'],
      token_prefix: row.token_prefix,
      status: Number(row.status),
      outcome: row.outcome,
      target: targetOf(row.target),
    })),
    next: rows.length > query.limit ? shown.at(-1)?.id : undefined,
  };
}
