import { randomBytes } from 'node:crypto';
import type { Deps } from '../../deps.ts';

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

/** Ids sort by time (base-36 milliseconds, fixed width) so the newest-first read is an index scan. */
function activityId(at: number): string {
  return `${at.toString(36).padStart(10, '0')}${randomBytes(5).toString('hex')}`;
}

/** Records one call an agent token made. Written through the write batcher: group commit on SQLite. */
export async function recordActivity(deps: Deps, record: ActivityRecord): Promise<void> {
  await deps.writes.run((trx) =>
    trx
      .insertInto('activity')
      .values({
        id: activityId(record.at),
        member_id: record.memberId,
        at: record.at,
        operation: record.operation,
        surface: record.surface,
        token_prefix: record.tokenPrefix,
        status: record.status,
        outcome: record.outcome,
      })
      .execute(),
  );
}

export interface ActivityView {
  operation: string;
  at: string;
  surface: 'rest' | 'mcp' | 'a2a';
  token_prefix: string;
  status: number;
  outcome: string;
}

export async function recentActivity(deps: Deps, memberId: string, limit: number): Promise<ActivityView[]> {
  const rows = await deps.db
    .selectFrom('activity')
    .selectAll()
    .where('member_id', '=', memberId)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    operation: row.operation,
    at: new Date(Number(row.at)).toISOString(),
    surface: row.surface as ActivityView['surface'],
    token_prefix: row.token_prefix,
    status: Number(row.status),
    outcome: row.outcome,
  }));
}
