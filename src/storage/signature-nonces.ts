import { sql } from 'kysely';
import type { Database } from './database.ts';
import { arg, numberArg, prepare, prepareDirect } from './engine/prepared.ts';
import type { Db } from './schema.ts';
import { transact, type WritePort } from './transactions.ts';

/** Expired rows are deleted once every this many claims (per instance), so the table stays small. */
const SWEEP_EVERY = 1000;
let claimsSinceSweep = 0;

/** Inserts the nonce, or takes over its row once expired; returns the row only when it did. */
const claimQuery = (db: Db) =>
  db
    .insertInto('signature_nonces')
    .values({ nonce_key: arg(0), expires_at: numberArg(1) })
    .onConflict((oc) =>
      oc
        .column('nonce_key')
        .doUpdateSet({ expires_at: sql`excluded.expires_at` })
        .where('signature_nonces.expires_at', '<', numberArg(2)),
    )
    .returning('nonce_key');
const claim = prepare(claimQuery);
const claimAtOnce = prepareDirect(claimQuery);
const sweepAtOnce = prepareDirect((db) =>
  db.deleteFrom('signature_nonces').where('expires_at', '<', numberArg(0)),
);

/**
 * Claims signature nonces (reference §7) for every instance at once: for each, one atomic upsert that
 * inserts the nonce, or takes over a row whose time is up, and reports whether it did. A nonce still
 * live is left as it is, and its claim answers false: the nonce was used before. The claims share
 * one transaction.
 *
 * The row lives as long as the signature it came with could be accepted (its freshness window);
 * after that a replay fails on `created`, so nothing is lost by forgetting the nonce.
 */
export async function claimNonces(
  port: WritePort,
  claims: readonly { nonceKey: string; expiresAt: number }[],
  now: number,
): Promise<boolean[]> {
  const sweep = sweepDue(claims.length);
  return transact(port, async (trx) => {
    if (sweep) await trx.deleteFrom('signature_nonces').where('expires_at', '<', now).execute();
    const claimed: boolean[] = [];
    for (const { nonceKey, expiresAt } of claims)
      claimed.push((await claim(trx, nonceKey, expiresAt, now)).length === 1);
    return claimed;
  });
}

/** Whether the table's expired rows are to be deleted along with these claims. */
function sweepDue(claims: number): boolean {
  claimsSinceSweep += claims;
  if (claimsSinceSweep < SWEEP_EVERY) return false;
  claimsSinceSweep = 0;
  return true;
}

/** What the signature step needs: claim a nonce once, synchronously when the store can. */
export interface NonceStore {
  claim(nonceKey: string, expiresAt: number, now: number): boolean | Promise<boolean>;
}

interface NoncePorts extends WritePort {
  db: Db;
  database: Pick<Database, 'engine' | 'writeAtOnce'>;
}

interface PendingClaim {
  nonceKey: string;
  expiresAt: number;
  answer(claimed: boolean): void;
  fail(error: unknown): void;
}

/**
 * Several instances share PostgreSQL: the table is the one authority and every claim waits for it.
 *
 * The embedded engine is one process, the whole service: this process's memory refuses a reused
 * nonce at once, and a new one is accepted once its row is committed, so a restart (which reads the
 * table's live nonces first) forgets none, not even after kill -9. The nonces claimed in one turn
 * of the event loop are written as one transaction, not one each (per nonce, a unit's own cost was
 * about a tenth of the verification's, and a commit of its own more than half of it): at once on
 * the connection when it is free (Database.writeAtOnce), else as a unit of the write batcher.
 */
class EmbeddedNonces implements NonceStore {
  private readonly ports: NoncePorts;
  private readonly live = new Map<string, number>();
  private claimsSinceSweep = 0;
  private loading: Promise<void> | undefined;
  private pending: PendingClaim[] = [];

  constructor(ports: NoncePorts, now: number) {
    this.ports = ports;
    this.loading = this.load(now);
  }

  private async load(now: number): Promise<void> {
    const rows = await this.ports.db
      .selectFrom('signature_nonces')
      .select(['nonce_key', 'expires_at'])
      .where('expires_at', '>=', now)
      .execute();
    for (const row of rows) this.live.set(row.nonce_key, Number(row.expires_at));
    this.loading = undefined;
  }

  claim(nonceKey: string, expiresAt: number, now: number): boolean | Promise<boolean> {
    if (this.loading) return this.loading.then(() => this.claim(nonceKey, expiresAt, now));
    if (++this.claimsSinceSweep >= SWEEP_EVERY) this.sweep(now);
    const until = this.live.get(nonceKey);
    if (until !== undefined && until >= now) return false;
    this.live.set(nonceKey, expiresAt);
    // The call goes on only once the claim is committed: a nonce accepted before a crash is still
    // refused after the restart.
    return new Promise<boolean>((answer, fail) => {
      if (this.pending.push({ nonceKey, expiresAt, answer, fail }) === 1) setImmediate(() => this.write(now));
    });
  }

  private write(now: number): void {
    const claims = this.pending;
    this.pending = [];
    let written: { value: boolean[] } | undefined;
    try {
      written = this.ports.database.writeAtOnce?.((run) => {
        if (sweepDue(claims.length)) sweepAtOnce(this.ports.db, run, now);
        return claims.map(
          ({ nonceKey, expiresAt }) => claimAtOnce(this.ports.db, run, nonceKey, expiresAt, now).length === 1,
        );
      });
    } catch (error) {
      this.failed(claims, error);
      return;
    }
    if (written) {
      for (const [index, { answer }] of claims.entries()) answer(written.value[index]);
      return;
    }
    claimNonces(this.ports, claims, now).then(
      (claimed) => {
        for (const [index, { answer }] of claims.entries()) answer(claimed[index]);
      },
      (error: unknown) => this.failed(claims, error),
    );
  }

  private failed(claims: PendingClaim[], error: unknown): void {
    for (const { nonceKey, fail } of claims) {
      this.live.delete(nonceKey);
      fail(error);
    }
  }

  private sweep(now: number): void {
    this.claimsSinceSweep = 0;
    // The map is in the order the nonces were first claimed, which is nearly their expiry's: the
    // sweep stops at the first live one (one whose expiry is further out only holds the ones after
    // it a little longer, and a lookup checks the expiry anyway).
    for (const [key, until] of this.live) {
      if (until >= now) break;
      this.live.delete(key);
    }
  }
}

const stores = new WeakMap<object, NonceStore>();

/** The nonce store of these ports' database, made on first use. */
export function nonceStore(ports: NoncePorts, now: number): NonceStore {
  let store = stores.get(ports.writes);
  if (store) return store;
  store =
    ports.database.engine === 'sqlite'
      ? new EmbeddedNonces(ports, now)
      : {
          claim: async (nonceKey, expiresAt, at) =>
            (await claimNonces(ports, [{ nonceKey, expiresAt }], at))[0],
        };
  stores.set(ports.writes, store);
  return store;
}
