import type { Deps } from '../../deps.ts';
import type { FeedbackTable } from '../../storage/schema.ts';

export async function listFeedback(deps: Deps, status = 'open'): Promise<FeedbackTable[]> {
  return deps.db
    .selectFrom('feedback')
    .selectAll()
    .where('status', '=', status)
    .orderBy('created_at', 'desc')
    .execute();
}

/** Closes an open ticket; a ticket already resolved stays as it was. */
export async function resolveFeedback(
  deps: Deps,
  ticketId: string,
): Promise<'done' | 'unknown' | 'not_open'> {
  const updated = await deps.db
    .updateTable('feedback')
    .set({ status: 'resolved' })
    .where('ticket_id', '=', ticketId)
    .where('status', '=', 'open')
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 1) return 'done';
  const exists = await deps.db
    .selectFrom('feedback')
    .select('ticket_id')
    .where('ticket_id', '=', ticketId)
    .executeTakeFirst();
  return exists ? 'not_open' : 'unknown';
}
