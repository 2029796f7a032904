import type { A2aTasksTable, Db } from './schema.ts';
import { transact, type WritePort } from './transactions.ts';

export type A2aTaskRow = A2aTasksTable;

/**
 * Keeps a task, and drops the tasks whose retention has ended (the expiry index makes that a range
 * scan, empty most of the time), so the table holds at most one retention period of calls.
 */
export async function saveA2aTask(port: WritePort, task: A2aTaskRow, now: number): Promise<void> {
  await transact(port, async (trx) => {
    await trx.deleteFrom('a2a_tasks').where('expires_at', '<=', now).execute();
    await trx.insertInto('a2a_tasks').values(task).execute();
  });
}

/** The member's task, while it is kept; another member's task is as absent as an unknown one. */
export function findA2aTask(db: Db, id: string, memberId: string, now: number) {
  return db
    .selectFrom('a2a_tasks')
    .selectAll()
    .where('id', '=', id)
    .where('member_id', '=', memberId)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}

export interface TaskListQuery {
  memberId: string;
  now: number;
  contextId?: string;
  state?: string;
  /** Only tasks updated after this instant (ListTasks' statusTimestampAfter). */
  updatedAfter?: number;
  /** Continue after this task in the order (updated_at desc, id desc). */
  after?: { updatedAt: number; id: string };
  limit: number;
}

/** One page of the member's kept tasks, most recently updated first, and how many match in all. */
export async function listA2aTasks(
  db: Db,
  query: TaskListQuery,
): Promise<{ rows: A2aTaskRow[]; total: number }> {
  let filtered = db
    .selectFrom('a2a_tasks')
    .where('member_id', '=', query.memberId)
    .where('expires_at', '>', query.now);
  if (query.contextId) filtered = filtered.where('context_id', '=', query.contextId);
  if (query.state) filtered = filtered.where('state', '=', query.state);
  if (query.updatedAfter !== undefined) filtered = filtered.where('updated_at', '>', query.updatedAfter);
  const counted = await filtered.select((eb) => eb.fn.countAll<string | number>().as('n')).executeTakeFirst();
  let page = filtered.selectAll();
  const after = query.after;
  if (after) {
    page = page.where((eb) =>
      eb.or([
        eb('updated_at', '<', after.updatedAt),
        eb.and([eb('updated_at', '=', after.updatedAt), eb('id', '<', after.id)]),
      ]),
    );
  }
  const rows = await page.orderBy('updated_at', 'desc').orderBy('id', 'desc').limit(query.limit).execute();
  return { rows, total: Number(counted?.n ?? 0) };
}
