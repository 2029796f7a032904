import type { Database } from '../../storage/database.ts';
import type { OnDatabase } from '../ports.ts';
import type { DonatePort } from './payment-port.ts';
import { pendingClaims } from './settlements.ts';

/** The running reconciler of each database handle (one per process), to be woken early. */
const wakers = new WeakMap<Database, (at: number) => void>();

/** Asks this process's reconciler for a pass at `at` (a claim's lease end); nothing when none runs. */
export function reconcileAfter(deps: OnDatabase, at: number): void {
  wakers.get(deps.database)?.(at);
}

/**
 * Reconciles at start and again whenever a claim's lease runs out (and every few minutes, for claims
 * another instance left behind). Returns the function that stops it.
 */
export function startPaymentReconciler(
  deps: DonatePort,
  log: { info(details: object, message: string): void; error(details: object, message: string): void },
): () => void {
  let timer: NodeJS.Timeout | undefined;
  let due = Number.POSITIVE_INFINITY;
  let stopped = false;
  const schedule = (delay: number) => {
    if (stopped) return;
    if (timer) clearTimeout(timer);
    due = deps.clock.now() + delay;
    timer = setTimeout(pass, delay).unref();
  };
  const pass = async () => {
    due = Number.POSITIVE_INFINITY;
    let delay = 5 * 60_000;
    try {
      // Without a payee nothing can be settled, so the x402 code is not loaded for a pass (terms.ts).
      if (deps.config.payments.payTo) {
        const { reconcilePayments } = await import('./reconcile-pass.ts');
        const report = await reconcilePayments(deps);
        if (report.recorded || report.failed) log.info({ ...report }, 'payments reconciled');
      }
      const pending = await pendingClaims(deps);
      if (pending.nextLeaseEnd !== undefined)
        delay = Math.min(delay, Math.max(1000, pending.nextLeaseEnd - deps.clock.now() + 50));
    } catch (error) {
      log.error({ err: error }, 'payment reconciliation failed');
      delay = 30_000;
    }
    schedule(delay);
  };
  // A request that left a claim behind asks for a pass when its lease ends.
  wakers.set(deps.database, (at) => {
    if (at < due) schedule(Math.max(0, at - deps.clock.now() + 50));
  });
  void pass();
  return () => {
    stopped = true;
    wakers.delete(deps.database);
    if (timer) clearTimeout(timer);
  };
}
