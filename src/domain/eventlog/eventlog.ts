import type { Database } from '../../storage/database.ts';
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
  // Beyond reference §4: the member, their agent or an operator cancelled a booking.
  'booking_cancelled',
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

const KNOWN_TYPES = new Set<string>(EVENT_TYPES);

/** A requested type filter as every reader of the log takes it: trimmed, unknown values dropped. */
export function knownEventTypes(types: readonly string[] | undefined): EventType[] | undefined {
  return types?.map((t) => t.trim()).filter((t): t is EventType => KNOWN_TYPES.has(t));
}

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
  /**
   * Present only when records after `since` are gone (the retention sweep deleted them): the last
   * id no longer kept. The page starts at the oldest kept record.
   */
  pruned_through?: number;
}

/**
 * One page after `since`. The cursor is the largest id the read covered: the last record returned
 * while more follow; else, for a read of some types, the reader's latest record of any type (so the
 * next poll starts past what this one scanned, and a poll waiting for a rare type does not read the
 * whole backlog again each time); else the last record returned, or `since` when nothing is new.
 */
export async function readEvents(
  db: Executor,
  recipientId: string,
  query: { since: number; types?: readonly string[]; limit: number },
): Promise<Page> {
  // The head first: every record up to it is committed, so a filtered read bounded by it has seen
  // all it could match up to there.
  const head = query.types ? await eventLog.lastId(db, recipientId) : undefined;
  const rows = await eventLog.after(db, recipientId, query.since, query.limit + 1, query.types, head);
  const page = rows.slice(0, query.limit);
  const hasMore = rows.length > query.limit;
  const lastReturned = page.length ? Number(page[page.length - 1].id) : query.since;
  const read: Page = {
    events: page.map(loggedOf),
    cursor: hasMore || head === undefined ? lastReturned : Math.max(lastReturned, head),
    has_more: hasMore,
  };
  // Ids never skip: a read of every type that starts right after `since` missed nothing, and
  // nothing can be missing past the head.
  const contiguous = !query.types && rows.length > 0 && Number(rows[0].id) === query.since + 1;
  if (!contiguous && !(head !== undefined && head <= query.since)) {
    const prunedThrough = await prunedThroughOf(db, recipientId, head);
    if (prunedThrough > query.since) {
      read.pruned_through = prunedThrough;
      read.cursor = Math.max(read.cursor, prunedThrough);
    }
  }
  return read;
}

/**
 * The last id the retention sweep took from the reader's log (0: none). Ids never skip and a later
 * one is never visible before an earlier one, so every id below the oldest kept one was written and
 * deleted; with none kept, every id up to the head (read after the page, or before it: `head`) was.
 */
async function prunedThroughOf(db: Executor, recipientId: string, head: number | undefined): Promise<number> {
  const oldest = await eventLog.oldestId(db, recipientId);
  if (oldest !== undefined) return oldest - 1;
  return head ?? (await eventLog.lastId(db, recipientId));
}

/**
 * Calls `wake` after each commit that may have appended to the reader's log, on this instance or
 * any other on the same database (storage/engine/append-feed.ts); the returned function stops. A
 * wake says only "read again after your cursor": it may come for a record of a type the reader
 * filters out, or for none.
 */
export function watchAppends(
  database: Pick<Database, 'appends'>,
  recipientId: string,
  wake: () => void,
): () => void {
  return database.appends?.subscribe(recipientId, wake) ?? (() => {});
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
