import { type Page, type PageRequest, pageOf } from '../../storage/paging.ts';
import type { Store } from '../ports.ts';

export interface ApprovedHighlight {
  id: string;
  story: Record<string, unknown>;
  submittedAt: number;
  approvedAt: number;
}

/**
 * The stories operators approved, most recently approved first: what the community reads once
 * moderation is done. Pending, rejected and expired stories never appear.
 */
export async function listApprovedHighlights(
  deps: Store,
  page: PageRequest,
): Promise<Page<ApprovedHighlight>> {
  const query = deps.db
    .selectFrom('highlights')
    .select(['id', 'story', 'submitted_at', 'decided_at'])
    .where('status', '=', 'active');
  const found = await pageOf(query, { time: 'decided_at', id: 'id', direction: 'desc' }, page);
  return {
    next: found.next,
    rows: found.rows.map((row) => ({
      id: row.id,
      story: JSON.parse(row.story) as Record<string, unknown>,
      submittedAt: Number(row.submitted_at),
      approvedAt: Number(row.decided_at),
    })),
  };
}
