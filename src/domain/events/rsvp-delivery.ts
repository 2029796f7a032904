import { MS } from '../../clock.ts';
import { type OutboundError, outboundFetch } from '../../outbound.ts';
import { rsvps } from '../../storage/rsvps.ts';
import type { RsvpsTable } from '../../storage/schema.ts';
import { transact, type WritePort } from '../../storage/transactions.ts';
import { appendEvent } from '../eventlog/eventlog.ts';
import type { Clocked, Configured, Store } from '../ports.ts';
import { claimDueJobs, settleJob } from '../queue/claim.ts';
import { isLocalEventUrl } from './events.ts';

const DELIVERY_TIMEOUT_MS = 10_000;
/** The platform's answer is read only for its status; more than this is not an RSVP receipt. */
const MAX_ANSWER_BYTES = 256 * 1024;
const MAX_ATTEMPTS = 8;
const FIRST_RETRY_MS = 30 * MS.second;
const LONGEST_RETRY_MS = MS.hour;

export type DeliveryOutcome = { kind: 'delivered' } | { kind: 'retry' | 'failed'; reason: string };

/**
 * The event-platform side of an RSVP: an HTTP POST of the RSVP to the configured webhook, or, with
 * none configured, local-only mode (the RSVP is recorded here and confirmed). The RSVP id travels
 * as the Idempotency-Key: a delivery repeated after a crash is the same RSVP to the platform.
 */
export async function deliverRsvp(
  deps: Configured<'rsvpWebhookUrl' | 'publicUrl'>,
  rsvp: RsvpsTable,
): Promise<DeliveryOutcome> {
  const url = deps.config.rsvpWebhookUrl;
  if (!url || isLocalEventUrl(deps.config, rsvp.event_url)) return { kind: 'delivered' };
  let response: Response;
  try {
    response = await outboundFetch(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': rsvp.id },
        body: JSON.stringify({
          rsvp_id: rsvp.id,
          event_url: rsvp.event_url,
          email: rsvp.email,
          name: rsvp.name,
          requested_at: new Date(Number(rsvp.created_at)).toISOString(),
        }),
      },
      { timeoutMs: DELIVERY_TIMEOUT_MS, maxBytes: MAX_ANSWER_BYTES },
    );
  } catch (error) {
    return {
      kind: 'retry',
      reason: `unreachable: ${(error as OutboundError).kind ?? (error as Error).name}`,
    };
  }
  if (response.ok) return { kind: 'delivered' };
  // The platform refused this RSVP for good; timeouts, throttling and server errors are worth a retry.
  const permanent =
    response.status >= 400 && response.status < 500 && ![408, 425, 429].includes(response.status);
  return { kind: permanent ? 'failed' : 'retry', reason: `HTTP ${response.status}` };
}

function retryDelay(attempts: number): number {
  return Math.min(FIRST_RETRY_MS * 2 ** (attempts - 1), LONGEST_RETRY_MS);
}

/** One pass over the due RSVPs: deliver each, then confirm, schedule a retry, or give up. */
export async function deliverDueRsvps(
  deps: Store & Clocked & Configured<'rsvpWebhookUrl' | 'publicUrl' | 'workerLeaseSeconds'> & WritePort,
  limit = 20,
): Promise<number> {
  const claims = await claimDueJobs(
    deps.db,
    'rsvps',
    deps.clock.now(),
    limit,
    deps.config.workerLeaseSeconds * 1000,
  );
  for (const claim of claims) {
    const rsvp = await rsvps.get(deps.db, claim.id);
    const outcome = await deliverRsvp(deps, rsvp);
    const now = deps.clock.now();
    const attempts = Number(rsvp.attempts) + 1;
    await transact(deps, async (trx) => {
      if (outcome.kind === 'retry' && attempts < MAX_ATTEMPTS) {
        await settleJob(trx, 'rsvps', claim, {
          attempts,
          next_attempt_at: now + retryDelay(attempts),
          last_error: outcome.reason,
          status: 'queued',
        });
        return;
      }
      const confirmed = outcome.kind === 'delivered';
      const settled = await settleJob(trx, 'rsvps', claim, {
        attempts,
        status: confirmed ? 'confirmed' : 'failed',
        settled_at: now,
        last_error: confirmed ? null : outcome.reason,
      });
      if (!settled) return;
      await appendEvent(
        trx,
        rsvp.member_id,
        {
          type: confirmed ? 'rsvp_confirmed' : 'rsvp_failed',
          actor: { kind: 'service', name: 'rsvp delivery' },
          target: { rsvp_id: rsvp.id, event_url: rsvp.event_url },
          payload: confirmed ? {} : { reason: outcome.reason },
          actions: [
            {
              label: 'See the event',
              mcp_tool: 'ic_events_get',
              args: { url: rsvp.event_url },
              consequential: false,
            },
          ],
        },
        now,
      );
    });
  }
  return claims.length;
}
