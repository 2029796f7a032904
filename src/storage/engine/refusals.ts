import { type RawBuilder, sql } from 'kysely';

/**
 * The SQLSTATE of a statement that refused to write by design (orRefuse): not a fault. Its
 * transaction is aborted, and the caller writes again the general way.
 */
export const REFUSED_WRITE = 'ACR01';

/** The PostgreSQL function that raises it (created by migration 0015). */
export const REFUSE_FUNCTION = 'agent_commons_refuse';

/**
 * SQL (PostgreSQL): `value`, or, where it is null, the statement fails with REFUSED_WRITE and
 * `reason`. A statement sent together with its COMMIT cannot be looked at before the commit; where
 * its outcome is not the one assumed, it fails instead, and PostgreSQL then skips the COMMIT sent
 * with it. PostgreSQL logs each refusal as an ERROR line carrying the reason (no parameter values).
 */
export function orRefuse<T>(value: RawBuilder<T | null>, reason: string): RawBuilder<T> {
  return sql<T>`coalesce(${value}, ${sql.raw(REFUSE_FUNCTION)}(${sql.lit(reason)}))`;
}

export function isRefusedWrite(error: unknown): boolean {
  return (error as { code?: unknown } | undefined)?.code === REFUSED_WRITE;
}
