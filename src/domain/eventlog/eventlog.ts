import { eventLog } from '../../storage/event-log.ts';
import type { Executor } from '../../storage/schema.ts';

/** AgentEventType (reference §4). Clients must tolerate types added later. */
export const EVENT_TYPES = [
  'tier_requested',
  'tier_approved',
  'tier_denied',
  'highlight_approved',
  'highlight_rejected',
  'booking_confirmed',
  'booking_declined',
  'rsvp_confirmed',
  // Beyond reference §4 (clients tolerate unknown types): the platform refused the RSVP for good.
  'rsvp_failed',
  // Beyond reference §4: an operator set the member's tier directly (console or CLI), not by request.
  'tier_changed',
  'event_request_approved',
  'event_request_declined',
  'token_minted',
  'token_revoked',
  // Beyond reference §4: a token's signing key was bound or revoked, or enforcement changed (spec 4.4).
  'signing_key_registered',
  'signing_key_revoked',
  'signing_enforcement_changed',
  // Beyond reference §4: an x402 donation by the member was settled and recorded.
  'donation_received',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** A follow-up an agent may offer its human: the MCP tool to call and whether it changes anything. */
export interface EventAction {
  label: string;
  mcp_tool: string;
  args: Record<string, unknown>;
  consequential: boolean;
}

export interface NewEvent {
  type: EventType;
  actor: Record<string, unknown>;
  target: Record<string, unknown>;
  payload?: Record<string, unknown>;
  actions?: EventAction[];
}

export interface LoggedEvent extends Required<NewEvent> {
  id: number;
  at: string;
}

/**
 * Appends one record to a reader's log, inside the caller's transaction. The id comes from the
 * reader's counter row, which the transaction holds until it commits: ids never skip, and a later
 * id never becomes visible before an earlier one.
 */
export async function appendEvent(
  trx: Executor,
  recipientId: string,
  event: NewEvent,
  now: number,
): Promise<number> {
  const id = await eventLog.nextId(trx, recipientId);
  await eventLog.insert(trx, {
    recipient_id: recipientId,
    id,
    type: event.type,
    at: now,
    actor: JSON.stringify(event.actor),
    target: JSON.stringify(event.target),
    payload: JSON.stringify(event.payload ?? {}),
    actions: JSON.stringify(event.actions ?? []),
  });
  return id;
}

export interface Page {
  events: LoggedEvent[];
  cursor: number;
  has_more: boolean;
}

/** One page after `since`; the cursor is the largest id returned, or `since` when nothing is new. */
export async function readEvents(
  db: Executor,
  recipientId: string,
  query: { since: number; types?: readonly string[]; limit: number },
): Promise<Page> {
  const rows = await eventLog.after(db, recipientId, query.since, query.limit + 1, query.types);
  const page = rows.slice(0, query.limit);
  return {
    events: page.map((row) => ({
      id: Number(row.id),
      type: row.type as EventType,
      at: new Date(Number(row.at)).toISOString(),
      actor: JSON.parse(row.actor),
      target: JSON.parse(row.target),
      payload: JSON.parse(row.payload),
      actions: JSON.parse(row.actions),
    })),
    cursor: page.length ? Number(page[page.length - 1].id) : query.since,
    has_more: rows.length > query.limit,
  };
}

function loggedOf(row: Awaited<ReturnType<typeof eventLog.latest>>[number]): LoggedEvent {
  return {
    id: Number(row.id),
    type: row.type as EventType,
    at: new Date(Number(row.at)).toISOString(),
    actor: JSON.parse(row.actor),
    target: JSON.parse(row.target),
    payload: JSON.parse(row.payload),
    actions: JSON.parse(row.actions),
  };
}

/** The reader's latest `limit` records, newest first (the member's pages show them). */
export async function latestEvents(db: Executor, recipientId: string, limit: number): Promise<LoggedEvent[]> {
  return (await eventLog.latest(db, recipientId, limit)).map(loggedOf);
}
