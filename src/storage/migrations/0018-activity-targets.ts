import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * What a call touched, beside the call: an event, a booking or a highlight (`kind:id`, null when the
 * call touched nothing of the kind), so the member's "My agents" page links each row to it. The
 * second index serves that page's filter by agent: a member's calls of one token, newest first,
 * stay an index range however many calls the member's other tokens made.
 */
export const activityTargets: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('activity').addColumn('target', 'text').execute();
    await db.schema
      .createIndex('activity_member_token')
      .on('activity')
      .columns(['member_id', 'token_prefix', 'id'])
      .execute();
  },
};
