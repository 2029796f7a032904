import { type RawBuilder, sql } from 'kysely';
import { activityIdPrefix } from './activity.ts';
import { onPostgres } from './engine/prepared.ts';
import { releaseLease, renewLease, takeLease } from './leases.ts';
import type { Executor } from './schema.ts';

// The retention sweep's SQL: for each kind of record, the rows past their window, deleted a batch
// at a time by primary key, each batch picked through an index on the time it is counted from
// (migration retention-indexes; for activity, its primary key), oldest first; and the sweep's lease (a row of settings), so one
// instance sweeps at a time.

export const RETENTION_KINDS = [
  'activity',
  'eventLog',
  'deviceGrants',
  'signInLinks',
  'sessions',
  'idempotency',
  'feedback',
  'highlights',
  'bookings',
  'tierRequests',
  'revokedTokens',
  'operatorAudit',
] as const;

export type RetentionKind = (typeof RETENTION_KINDS)[number];

/** One table's rows of a kind: those whose `time` is before the cut-off and that match `only`. */
interface Part {
  table: string;
  key: readonly string[];
  time: string;
  /** The cut-off as `time` holds it, where that column is not epoch ms. */
  cutoffOf?: (ms: number) => string;
  only?: RawBuilder<unknown>;
}

const PARTS: Record<RetentionKind, readonly Part[]> = {
  // An id begins with its call's time, fixed width (storage/activity.ts): ids before the cut-off's
  // prefix are the calls before it, and the primary key is the time index.
  activity: [{ table: 'activity', key: ['id'], time: 'id', cutoffOf: activityIdPrefix }],
  // Ids are never reused: event_log_heads keeps each reader's last id whatever is deleted here.
  eventLog: [{ table: 'event_log', key: ['recipient_id', 'id'], time: 'at' }],
  deviceGrants: [{ table: 'device_grants', key: ['id'], time: 'expires_at', only: sql`status <> 'pending'` }],
  signInLinks: [{ table: 'sign_in_links', key: ['id_hash'], time: 'expires_at' }],
  sessions: [{ table: 'sessions', key: ['id_hash'], time: 'expires_at' }],
  idempotency: [{ table: 'idempotency', key: ['key_hash'], time: 'expires_at' }],
  feedback: [{ table: 'feedback', key: ['ticket_id'], time: 'created_at', only: sql`status = 'resolved'` }],
  highlights: [
    { table: 'highlights', key: ['id'], time: 'decided_at', only: sql`status = 'rejected'` },
    // Never moderated: the moderation window ended unanswered.
    { table: 'highlights', key: ['id'], time: 'expires_at', only: sql`status = 'pending'` },
  ],
  bookings: [{ table: 'bookings', key: ['id'], time: 'end_at', only: sql`status <> 'queued'` }],
  tierRequests: [{ table: 'tier_requests', key: ['id'], time: 'decided_at', only: sql`status <> 'pending'` }],
  revokedTokens: [{ table: 'tokens', key: ['id'], time: 'revoked_at' }],
  operatorAudit: [{ table: 'operator_audit', key: ['id'], time: 'at' }],
};

const LEASE_KEY = 'retention_sweep_lease';

function due(part: Part, cutoff: number): RawBuilder<unknown> {
  const before = sql`${sql.ref(part.time)} < ${part.cutoffOf ? part.cutoffOf(cutoff) : cutoff}`;
  return part.only ? sql`${before} and ${part.only}` : before;
}

function keyOf(part: Part): RawBuilder<unknown> {
  const columns = sql.join(part.key.map((column) => sql.ref(column)));
  return part.key.length === 1 ? columns : sql`(${columns})`;
}

export const retention = {
  /**
   * Deletes up to `limit` rows of the kind due at `cutoff`, oldest first: one statement whose inner
   * select walks the time index, so a batch locks only the rows it deletes. How many it deleted.
   */
  async deleteBatch(executor: Executor, kind: RetentionKind, cutoff: number, limit: number): Promise<number> {
    let deleted = 0;
    for (const part of PARTS[kind]) {
      if (deleted >= limit) break;
      const table = sql.table(part.table);
      // On PostgreSQL a row picked by the inner select may change before the delete reaches it (an
      // expired story resubmitted): the outer condition is checked again on the row it locks. SQLite
      // runs the statement under its one write lock, where nothing changes in between; there the
      // outer condition is left out so the planner finds each row by its key.
      const recheck = onPostgres(executor) ? sql` and ${due(part, cutoff)}` : sql``;
      const result = await sql`delete from ${table} where ${keyOf(part)} in (select ${sql.join(
        part.key.map((column) => sql.ref(column)),
      )} from ${table} where ${due(part, cutoff)} order by ${sql.ref(part.time)} limit ${
        limit - deleted
      })${recheck}`.execute(executor);
      deleted += Number(result.numAffectedRows ?? 0);
    }
    return deleted;
  },

  /** How many rows of the kind are due at `cutoff` (the dry run's count). */
  async countDue(executor: Executor, kind: RetentionKind, cutoff: number): Promise<number> {
    let total = 0;
    for (const part of PARTS[kind]) {
      const { rows } = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(
        part.table,
      )} where ${due(part, cutoff)}`.execute(executor);
      total += Number(rows[0]?.n ?? 0);
    }
    return total;
  },

  /** Takes the sweep's lease (storage/leases.ts). */
  takeLease: (executor: Executor, now: number, until: number) => takeLease(executor, LEASE_KEY, now, until),

  /** Moves the sweep's lease from `held` to `until`; false when it ran out. */
  renewLease: (executor: Executor, held: number, until: number) =>
    renewLease(executor, LEASE_KEY, held, until),

  /** Ends the sweep's lease at once. */
  releaseLease: (executor: Executor, held: number) => releaseLease(executor, LEASE_KEY, held),
};
