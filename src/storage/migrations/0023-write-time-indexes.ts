import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * Two index entries fewer for the writes that are made most, with the same reads served:
 * - the retention sweep finds the activity past its window by id, since an activity id begins with
 *   its call's time (storage/activity.ts): the primary key is already an index on time, and the
 *   one on `at` made every recorded call write one more entry;
 * - the index of decided stories holds decided stories only, so a story submitted (undecided)
 *   writes no entry to it; the reads by decision time name `decided_at is not null`.
 */
export const writeTimeIndexes: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.dropIndex('activity_at').execute();
    await db.schema.dropIndex('highlights_status_decided').execute();
    await db.schema
      .createIndex('highlights_status_decided')
      .on('highlights')
      .columns(['status', 'decided_at', 'id'])
      .where(sql.ref('decided_at'), 'is not', null)
      .execute();
  },
};
