import { feedback } from '../../storage/feedback.ts';
import type { Page, PageRequest } from '../../storage/paging.ts';
import type { FeedbackTable } from '../../storage/schema.ts';
import type { Store } from '../ports.ts';

/** Newest first by default; the triage queue reads oldest first (`asc`). */
export function listFeedback(
  deps: Store,
  status: string,
  page: PageRequest,
  direction: 'asc' | 'desc' = 'desc',
): Promise<Page<FeedbackTable>> {
  return feedback.page(deps.db, status, page, direction);
}

/** Closes an open ticket; a ticket already resolved stays as it was. */
export async function resolveFeedback(
  deps: Store,
  ticketId: string,
): Promise<'done' | 'unknown' | 'not_open'> {
  if (await feedback.resolveOpen(deps.db, ticketId)) return 'done';
  return (await feedback.exists(deps.db, ticketId)) ? 'not_open' : 'unknown';
}
