import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * An index for a reader's records of some types: a poll waiting for a rare type (an agent waiting
 * for `tier_approved`) finds its rows without testing the type of every record after its cursor.
 */
export const eventLogTypes: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createIndex('event_log_type')
      .on('event_log')
      .columns(['recipient_id', 'type', 'id'])
      .execute();
  },
};
