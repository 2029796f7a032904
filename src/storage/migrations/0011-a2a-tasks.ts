import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * A2A tasks: every skill call made with A2A's message methods is a task a client can read back
 * (GetTask, ListTasks, tasks/get) for a retention period, and only the member who made the call can.
 */
export const a2aTasks: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('a2a_tasks')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('member_id', 'text', (c) => c.notNull().references('members.id'))
      .addColumn('context_id', 'text', (c) => c.notNull())
      .addColumn('capability', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('result', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    // ListTasks reads one member's tasks, most recently updated first.
    await db.schema
      .createIndex('a2a_tasks_member_updated')
      .on('a2a_tasks')
      .columns(['member_id', 'updated_at', 'id'])
      .execute();
    await db.schema.createIndex('a2a_tasks_expiry').on('a2a_tasks').column('expires_at').execute();
  },
};
