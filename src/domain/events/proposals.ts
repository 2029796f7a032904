import { takeQuota } from '../../core/quota.ts';
import type { PolicyOutcome, RatePolicy } from '../../core/rate-limit.ts';
import { randomId } from '../../secrets.ts';
import { eventRequests } from '../../storage/event-requests.ts';
import { events } from '../../storage/events.ts';
import type { Page, PageRequest } from '../../storage/paging.ts';
import type { EventRequestsTable } from '../../storage/schema.ts';
import { transact, type WritePort } from '../../storage/transactions.ts';
import { appendEvent } from '../eventlog/eventlog.ts';
import type { Clocked, Configured, OnDatabase, Store } from '../ports.ts';
import { forgetUpcoming } from './events.ts';

export function eventRequestQuota(deps: Configured<'limits'>): RatePolicy {
  return {
    name: 'event_requests',
    limit: deps.config.limits.eventRequestsPerDay,
    window: 'utc_day',
    per: 'member',
  };
}

export interface Proposal {
  title: string;
  start: string;
  end?: string;
  location?: string;
  description?: string;
  cover_url?: string;
  capacity?: number;
  visibility?: 'public' | 'members';
  host?: string;
  contact?: string;
  slideshow_url?: string;
}

export async function proposeEvent(
  deps: Clocked & Configured<'limits'> & WritePort,
  memberId: string,
  tokenId: string | null,
  proposal: Proposal,
): Promise<{ id: string; rate: PolicyOutcome }> {
  const now = deps.clock.now();
  return transact(deps, async (trx) => {
    const rate = await takeQuota(
      trx,
      eventRequestQuota(deps),
      memberId,
      now,
      'Back off to the next UTC day.',
    );
    const id = randomId('evr');
    await eventRequests.insert(trx, {
      id,
      member_id: memberId,
      token_id: tokenId,
      details: JSON.stringify(proposal),
      title: proposal.title,
      start_at: Date.parse(proposal.start),
      status: 'pending',
      created_at: now,
      decided_at: null,
      decided_by: null,
      reason: null,
      event_id: null,
    });
    return { id, rate };
  });
}

/** Newest first by default; the review queue reads oldest first (`asc`). */
export function listEventRequests(
  deps: Store,
  status: string | undefined,
  page: PageRequest,
  direction: 'asc' | 'desc' = 'desc',
): Promise<Page<EventRequestsTable>> {
  return eventRequests.page(deps.db, status, page, direction);
}

/** Where an approved proposal is published: a page of this service (the platform never saw it). */
export function publishedEventUrl(deps: Configured<'publicUrl'>, requestId: string): string {
  return `${deps.config.publicUrl}/events/${requestId}`;
}

/**
 * Approves (publishing the event into the upcoming list) or declines a pending proposal, with the
 * proposer's event-log record, in one transaction.
 */
export async function decideEventRequest(
  deps: Clocked & Configured<'publicUrl'> & OnDatabase & WritePort,
  id: string,
  decision: 'approve' | 'decline',
  decidedBy: string,
  reason?: string,
): Promise<'done' | 'not_pending' | 'unknown'> {
  const now = deps.clock.now();
  const outcome = await transact(deps, async (trx) => {
    const request = await eventRequests.byId(trx, id);
    if (!request) return 'unknown' as const;
    const eventId = decision === 'approve' ? `evt_${id}` : null;
    const decided = await eventRequests.decide(trx, id, {
      status: decision === 'approve' ? 'approved' : 'declined',
      decided_at: now,
      decided_by: decidedBy,
      reason: reason ?? null,
      event_id: eventId,
    });
    if (!decided) return 'not_pending' as const;
    const details = JSON.parse(request.details) as Proposal;
    const url = publishedEventUrl(deps, id);
    if (eventId) {
      await events.insert(trx, {
        id: eventId,
        platform_url: url,
        title: details.title,
        start_at: Date.parse(details.start),
        end_at: details.end ? Date.parse(details.end) : null,
        location: details.location ?? null,
        cover_url: details.cover_url ?? null,
        description: details.description ?? null,
        updated_at: now,
        source: 'proposal',
      });
    }
    await appendEvent(
      trx,
      request.member_id,
      {
        type: decision === 'approve' ? 'event_request_approved' : 'event_request_declined',
        actor: { kind: 'operator', name: decidedBy },
        target: { request_id: id, title: request.title, ...(eventId ? { event_url: url } : {}) },
        payload: reason ? { reason } : {},
        actions: eventId
          ? [{ label: 'See the event', mcp_tool: 'ic_events_get', args: { url }, consequential: false }]
          : [],
      },
      now,
    );
    return 'done' as const;
  });
  if (outcome === 'done') forgetUpcoming(deps);
  return outcome;
}

/** Who proposed each of these events, by event id: the member's id and name (proposals only). */
export async function proposersOf(
  deps: Store,
  eventIds: readonly string[],
): Promise<Map<string, { memberId: string; name: string | null }>> {
  const rows = await eventRequests.proposersOf(deps.db, eventIds);
  return new Map(
    rows.flatMap((row) =>
      row.event_id ? [[row.event_id, { memberId: row.member_id, name: row.name }]] : [],
    ),
  );
}
