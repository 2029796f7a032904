import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * What the database kept that it no longer does. The key feedback hashed addresses with sat in
 * `settings` beside the hashes, so anyone with a copy could recompute a hash for every IPv4 address:
 * it is dropped, and addresses are now keyed with IP_HASH_SECRET from the environment (tickets hashed
 * before still group with each other, never with newer ones: docs/decisions.md). Device grants that
 * have ended lose their requester's address and software, and A2A tasks of research lose the
 * answer that echoed the question.
 */
export const privacy: Migration = {
  async up(db: Kysely<any>) {
    await db.deleteFrom('settings').where('key', '=', 'ip_salt').execute();
    await db
      .updateTable('device_grants')
      .set({ ip: null, user_agent: null })
      .where('status', '!=', 'pending')
      .execute();
    await db
      .updateTable('a2a_tasks')
      .set({ result: 'null' })
      .where('capability', '=', 'ic_research_ask')
      .execute();
  },
};
