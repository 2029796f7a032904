import { sql } from 'kysely';
import { arg, numberArg, prepare } from '../../storage/engine/prepared.ts';
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

// Nothing reads its answer (the id comes from the head row), so it is deferred: on PostgreSQL it
// travels with the transaction's next statement (src/storage/engine/statement-groups.ts).
const insertEvent = prepare(
  (db) =>
    db.insertInto('event_log').values({
      recipient_id: arg(0),
      id: numberArg(1),
      type: arg(2),
      at: numberArg(3),
      actor: arg(4),
      target: arg(5),
      payload: arg(6),
      actions: arg(7),
    }),
  { deferred: true },
);

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
  const head = await trx
    .insertInto('event_log_heads')
    .values({ recipient_id: recipientId, last_id: 1 })
    .onConflict((oc) => oc.column('recipient_id').doUpdateSet({ last_id: sql`event_log_heads.last_id + 1` }))
    .returning('last_id')
    .executeTakeFirstOrThrow();
  const id = Number(head.last_id);
  await insertEvent(
    trx,
    recipientId,
    id,
    event.type,
    now,
    JSON.stringify(event.actor),
    JSON.stringify(event.target),
    JSON.stringify(event.payload ?? {}),
    JSON.stringify(event.actions ?? []),
  );
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
  let select = db
    .selectFrom('event_log')
    .selectAll()
    .where('recipient_id', '=', recipientId)
    .where('id', '>', query.since)
    .orderBy('id')
    .limit(query.limit + 1);
  if (query.types) select = select.where('type', 'in', query.types.length ? [...query.types] : ['']);
  const rows = await select.execute();
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
