import { onPostgres } from './engine/prepared.ts';
import type { Executor, ResourcesTable } from './schema.ts';

// Rooms and printers members book (table resources).

export const resources = {
  /** Every resource, by kind then name. */
  all(executor: Executor): Promise<ResourcesTable[]> {
    return executor.selectFrom('resources').selectAll().orderBy('kind').orderBy('name').execute();
  },

  byId(executor: Executor, id: string): Promise<ResourcesTable | undefined> {
    return executor.selectFrom('resources').selectAll().where('id', '=', id).executeTakeFirst();
  },

  /**
   * Holds the resource's row until the transaction ends, so deciders of its bookings take turns
   * (PostgreSQL; the embedded engine's single writer already makes transactions take turns).
   */
  async lockForDecision(trx: Executor, id: string): Promise<void> {
    if (!onPostgres(trx)) return;
    await trx.selectFrom('resources').select('id').where('id', '=', id).forUpdate().execute();
  },

  /** Adds a resource; refused (a unique violation) where its id is taken. */
  async insert(executor: Executor, resource: ResourcesTable): Promise<void> {
    await executor.insertInto('resources').values(resource).execute();
  },

  /** Adds a resource or replaces its definition (its bookings are kept). */
  async save(executor: Executor, resource: ResourcesTable): Promise<void> {
    const { id, ...values } = resource;
    await executor
      .insertInto('resources')
      .values(resource)
      .onConflict((oc) => oc.column('id').doUpdateSet(values))
      .execute();
  },
};
