import { type Page, type PageRequest, pageOf } from '../../storage/paging.ts';
import type { FeedbackTable } from '../../storage/schema.ts';
import type { Store } from '../ports.ts';

/** Newest first by default; the triage queue reads oldest first (`asc`). */
export function listFeedback(
  deps: Store,
  status: string,
  page: PageRequest,
  direction: 'asc' | 'desc' = 'desc',
): Promise<Page<FeedbackTable>> {
  return pageOf(
    deps.db.selectFrom('feedback').selectAll().where('status', '=', status),
    { time: 'created_at', id: 'ticket_id', direction },
    page,
  );
}

/** Closes an open ticket; a ticket already resolved stays as it was. */
export async function resolveFeedback(
  deps: Store,
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
