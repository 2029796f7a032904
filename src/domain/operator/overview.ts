import { MS } from '../../clock.ts';
import { type QueueName, backlogs as queueBacklogs } from '../../storage/backlogs.ts';
import { members } from '../../storage/members.ts';
import { activityDays, dayOf, TALLY, tallies } from '../../storage/rollups.ts';
import type { Clocked, Store } from '../ports.ts';

/**
 * What the operator landing page shows (docs/pages.md): each queue's backlog, what agents did day by
 * day, and the tokens in use. The counts come from rollups the writes keep (storage/rollups.ts), so a
 * load reads a few hundred rows however long the activity log and the token table grow; the queue
 * backlogs are counts over each queue's status index.
 */

export type { QueueName };

export interface Backlog {
  queue: QueueName;
  /** How many wait, counted up to a bound (storage/backlogs.ts). */
  waiting: number;
  /** More than `waiting` wait: the count stopped at its bound. */
  more: boolean;
  /** When the oldest waiting item arrived (ms), or null when nothing waits. */
  oldestAt: number | null;
}

export const QUEUES: QueueName[] = [
  'tier_requests',
  'highlights',
  'event_requests',
  'feedback',
  'rsvps',
  'bookings',
];

/** One queue's backlog. */
export async function backlogOf(deps: Store & Clocked, queue: QueueName): Promise<Backlog> {
  const { waiting, oldest, more } = await queueBacklogs.of(deps.db, queue, deps.clock.now());
  return { queue, waiting, more, oldestAt: oldest };
}

export function backlogs(deps: Store & Clocked): Promise<Backlog[]> {
  return Promise.all(QUEUES.map((queue) => backlogOf(deps, queue)));
}

export interface DayActivity {
  /** UTC day, YYYY-MM-DD. */
  day: string;
  surface: string;
  requests: number;
  refusals: number;
}

export interface OperationCount {
  operation: string;
  calls: number;
  refusals: number;
}

/** The first UTC day (its number) of the last `days` days, today included. */
function firstDay(deps: Clocked, days: number): number {
  return dayOf(deps.clock.now()) - (days - 1);
}

/**
 * Calls per UTC day and surface over the last `days` days (today included), and how many of them
 * were refused (status 400 and above): the calls members' tokens and sessions made, as counted in
 * the daily rollup when they were recorded (public reads without a credential are not in it).
 */
export async function activityByDay(deps: Store & Clocked, days: number): Promise<DayActivity[]> {
  const rows = await activityDays.since(deps.db, firstDay(deps, days));
  const bySurface = new Map<string, DayActivity>();
  for (const row of rows) {
    const key = `${row.day} ${row.surface}`;
    const entry = bySurface.get(key) ?? {
      day: new Date(row.day * MS.day).toISOString().slice(0, 10),
      surface: row.surface,
      requests: 0,
      refusals: 0,
    };
    entry.requests += row.calls;
    entry.refusals += row.refusals;
    bySurface.set(key, entry);
  }
  return [...bySurface.values()];
}

/** The operations called most over the last `days` UTC days (today included), with their refusals; ties by name. */
export async function busiestOperations(
  deps: Store & Clocked,
  days: number,
  limit: number,
): Promise<OperationCount[]> {
  const rows = await activityDays.since(deps.db, firstDay(deps, days));
  const byOperation = new Map<string, OperationCount>();
  for (const row of rows) {
    const entry = byOperation.get(row.operation) ?? { operation: row.operation, calls: 0, refusals: 0 };
    entry.calls += row.calls;
    entry.refusals += row.refusals;
    byOperation.set(row.operation, entry);
  }
  return [...byOperation.values()]
    .sort((a, b) => b.calls - a.calls || (a.operation < b.operation ? -1 : a.operation > b.operation ? 1 : 0))
    .slice(0, limit);
}

export interface TokenCounts {
  live: number;
  sandbox: number;
  revoked: number;
  /** Live tokens used in the last 7 UTC days (today included): the agents at work. */
  activeThisWeek: number;
  /** Members with at least one live token. */
  members: number;
}

/** The tokens' tallies, kept where tokens are minted, revoked and used: one read of a dozen rows. */
export async function tokenCounts(deps: Store & Clocked): Promise<TokenCounts> {
  const today = dayOf(deps.clock.now());
  const week = Array.from({ length: 7 }, (_, i) => TALLY.lastUsed(today - i));
  const counts = await tallies.read(deps.db, [
    TALLY.live,
    TALLY.sandbox,
    TALLY.revoked,
    TALLY.holders,
    ...week,
  ]);
  const count = (key: string) => counts.get(key) ?? 0;
  return {
    live: count(TALLY.live),
    sandbox: count(TALLY.sandbox),
    revoked: count(TALLY.revoked),
    activeThisWeek: week.reduce((sum, key) => sum + count(key), 0),
    members: count(TALLY.holders),
  };
}

export interface MemberLabel {
  name: string;
  tier: string;
}

/** Names and tiers of the members a queue page mentions, so an operator reads people, not ids. */
export async function memberLabels(deps: Store, ids: readonly string[]): Promise<Map<string, MemberLabel>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await members.labels(deps.db, unique);
  return new Map(rows.map((row) => [row.id, { name: row.name, tier: row.tier }]));
}
