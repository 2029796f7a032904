import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import { engineOf } from './migration-0004.ts';

/**
 * The SQLSTATE of a statement that refused to write by design (orRefuse): not a fault. Its
 * transaction is aborted, and the caller writes again the general way.
 */
export const REFUSED_WRITE = 'ACR01';

/**
 * PostgreSQL: a function that fails its statement with REFUSED_WRITE. A statement sent together
 * with its COMMIT (one round trip) cannot be looked at before the commit; where its outcome is not
 * the one assumed, it fails instead, and PostgreSQL then skips the COMMIT sent with it. PostgreSQL
 * writes each such refusal to its log as an ERROR line carrying the reason (no parameter values).
 */
export const refusals: Migration = {
  async up(db: Kysely<any>) {
    if ((await engineOf(db)) !== 'postgres') return;
    await sql
      .raw(`
        create function agent_commons_refuse(reason text) returns bigint language plpgsql as $$
        begin
          raise exception using errcode = '${REFUSED_WRITE}', message = reason;
        end $$`)
      .execute(db);
  },
};

/** SQL: `value`, or, where it is null, the statement fails with REFUSED_WRITE and `reason`. */
export function orRefuse<T>(value: RawBuilder<T | null>, reason: string): RawBuilder<T> {
  return sql<T>`coalesce(${value}, agent_commons_refuse(${sql.lit(reason)}))`;
}

export function isRefusedWrite(error: unknown): boolean {
  return (error as { code?: unknown } | undefined)?.code === REFUSED_WRITE;
}
