import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * Indexes on the time each kind of record is kept from (storage/retention.ts), so that each batch
 * of the retention sweep reads the oldest due rows as an index range instead of scanning the
 * table. Resolved feedback and rejected highlights are served by the queue indexes already.
 */
export const retentionIndexes: Migration = {
  async up(db: Kysely<any>) {
    const indexes: [string, string, string[]][] = [
      ['activity_at', 'activity', ['at']],
      ['event_log_at', 'event_log', ['at']],
      ['device_grants_expiry', 'device_grants', ['expires_at']],
      ['sign_in_links_expiry', 'sign_in_links', ['expires_at']],
      ['sessions_expiry', 'sessions', ['expires_at']],
      ['idempotency_expiry', 'idempotency', ['expires_at']],
      ['highlights_status_expiry', 'highlights', ['status', 'expires_at']],
      ['bookings_end', 'bookings', ['end_at']],
      ['tier_requests_decided', 'tier_requests', ['decided_at']],
      ['tokens_revoked', 'tokens', ['revoked_at']],
      ['operator_audit_at', 'operator_audit', ['at']],
    ];
    for (const [name, table, columns] of indexes)
      await db.schema.createIndex(name).on(table).columns(columns).execute();
  },
};
