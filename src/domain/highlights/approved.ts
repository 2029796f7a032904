import { highlights } from '../../storage/highlights.ts';
import type { Page, PageRequest } from '../../storage/paging.ts';
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
  const found = await highlights.pageApproved(deps.db, page);
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
