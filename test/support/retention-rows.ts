// Rows of every kind the retention sweep deletes, written straight into the tables: each with the
// time its window counts from and the state that makes it finished or still live.
import { randomUUID } from 'node:crypto';
import { activityIdPrefix } from '../../src/storage/activity.ts';
import type { Executor } from '../../src/storage/schema.ts';

const id = () => randomUUID();

/** Writes one row of `kind`, its window counted from `at`; `live` writes the state never deleted. */
export async function writeRow(db: Executor, kind: string, memberId: string, at: number, live = false) {
  switch (kind) {
    case 'activity':
      return db
        .insertInto('activity')
        .values({
          // As the service writes them: the id begins with the call's time.
          id: `${activityIdPrefix(at)}${id().slice(0, 10)}`,
          member_id: memberId,
          at,
          operation: 'getMe',
          surface: 'rest',
          token_prefix: 'agt_x',
          status: 200,
          outcome: 'ok',
          target: null,
        })
        .execute();
    case 'eventLog': {
      const head = await db
        .insertInto('event_log_heads')
        .values({ recipient_id: memberId, last_id: 1 })
        .onConflict((oc) =>
          oc.column('recipient_id').doUpdateSet((eb) => ({ last_id: eb('event_log_heads.last_id', '+', 1) })),
        )
        .returning('last_id')
        .executeTakeFirstOrThrow();
      return db
        .insertInto('event_log')
        .values({
          recipient_id: memberId,
          id: Number(head.last_id),
          type: 'tier_approved',
          at,
          actor: '{}',
          target: '{}',
          payload: '{}',
          actions: '[]',
        })
        .execute();
    }
    case 'deviceGrants':
      return db
        .insertInto('device_grants')
        .values({
          id: id(),
          device_code_hash: id(),
          user_code_hash: id(),
          scopes: '[]',
          client_name: null,
          sandbox: 0,
          status: live ? 'pending' : 'consumed',
          created_at: at - 900_000,
          expires_at: at,
          interval_s: 5,
          last_poll_at: null,
          member_id: null,
          granted_scopes: null,
          denied_scopes: null,
          decided_at: null,
          reason: null,
          token_id: null,
          ip: null,
          user_agent: null,
          bound_session_hash: null,
        })
        .execute();
    case 'signInLinks':
      return db
        .insertInto('sign_in_links')
        .values({
          id_hash: id(),
          email: 'a@example.org',
          created_at: at - 900_000,
          expires_at: at,
          used_at: null,
        })
        .execute();
    case 'sessions':
      return db
        .insertInto('sessions')
        .values({
          id_hash: id(),
          member_id: memberId,
          created_at: at - 1000,
          expires_at: at,
          revoked_at: null,
        })
        .execute();
    case 'idempotency':
      return db
        .insertInto('idempotency')
        .values({
          key_hash: id(),
          fingerprint: 'f',
          state: 'done',
          status: 200,
          headers: '{}',
          body: '{}',
          created_at: at - 86_400_000,
          expires_at: at,
        })
        .execute();
    case 'feedback':
      return db
        .insertInto('feedback')
        .values({
          ticket_id: id(),
          member_id: null,
          token_id: null,
          category: 'bug',
          category_text: null,
          priority: 'normal',
          message: 'm',
          url: null,
          expected: null,
          got: null,
          agent_id: null,
          contact: null,
          ip_hash: 'h',
          warnings: '[]',
          status: live ? 'open' : 'resolved',
          created_at: at,
        })
        .execute();
    case 'highlights':
      return db
        .insertInto('highlights')
        .values({
          id: id(),
          member_id: memberId,
          token_id: 't',
          story: 's',
          status: live ? 'active' : 'rejected',
          submitted_at: at - 1000,
          updated_at: at,
          expires_at: at + 1000,
          decided_at: at,
          decided_by: 'op',
        })
        .execute();
    case 'bookings':
      return db
        .insertInto('bookings')
        .values({
          id: id(),
          resource_id: 'room-1',
          member_id: memberId,
          token_id: null,
          start_at: at - 3_600_000,
          end_at: at,
          purpose: 'p',
          email: null,
          status: live ? 'queued' : 'confirmed',
          reason: null,
          created_at: at - 7_200_000,
          locked_until: null,
          settled_at: null,
        })
        .execute();
    case 'tierRequests':
      return db
        .insertInto('tier_requests')
        .values({
          id: id(),
          member_id: memberId,
          tier: 'resident',
          note: null,
          status: live ? 'pending' : 'approved',
          created_at: at - 1000,
          decided_at: live ? null : at,
          decided_by: null,
          granted_tier: null,
          reason: null,
        })
        .execute();
    case 'revokedTokens':
      return db
        .insertInto('tokens')
        .values({
          id: id(),
          member_id: memberId,
          hash: id(),
          prefix: 'agt_x',
          name: 'n',
          scopes: '[]',
          sandbox: 0,
          source: 'cli',
          created_at: at - 1000,
          last_used_at: at,
          revoked_at: live ? null : at,
        })
        .execute();
    case 'operatorAudit':
      return db
        .insertInto('operator_audit')
        .values({ id: id(), at, operator_id: 'op', action: 'a', target: 't', outcome: 'ok', detail: '{}' })
        .execute();
  }
  throw new Error(`no row for ${kind}`);
}

/** The live rows a sweep never deletes, however old: kinds whose live state is not just "newer". */
export const LIVE_KINDS = [
  'deviceGrants',
  'feedback',
  'highlights',
  'bookings',
  'tierRequests',
  'revokedTokens',
];

const TABLES: Record<string, string> = {
  activity: 'activity',
  eventLog: 'event_log',
  deviceGrants: 'device_grants',
  signInLinks: 'sign_in_links',
  sessions: 'sessions',
  idempotency: 'idempotency',
  feedback: 'feedback',
  highlights: 'highlights',
  bookings: 'bookings',
  tierRequests: 'tier_requests',
  revokedTokens: 'tokens',
  operatorAudit: 'operator_audit',
};

export async function countRows(db: Executor, kind: string): Promise<number> {
  const row = await (db as any)
    .selectFrom(TABLES[kind])
    .select((eb: any) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
