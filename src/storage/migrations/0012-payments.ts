import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * x402 donations. A payment is claimed in `payment_settlements` under its key (the network,
 * token, payer and authorization nonce: what the chain itself never accepts twice) before it is sent
 * to the facilitator to settle, and that row stays until the donation is recorded. So a payload can be
 * settled at most once across every instance (the primary key), a settlement whose answer was lost
 * (the process killed, the facilitator silent) is found again and reconciled, and the donation row it
 * becomes carries the same key, unique, so it is never recorded twice.
 */
export const payments: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('payment_settlements')
      .addColumn('payment_key', 'text', (c) => c.primaryKey())
      // settling: sent (or about to be sent) to the facilitator; recorded: the donation row exists;
      // failed: the facilitator refused it for good (nothing moved).
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('payment', 'text', (c) => c.notNull())
      .addColumn('requirements', 'text', (c) => c.notNull())
      .addColumn('donation', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('lease_until', 'bigint', (c) => c.notNull())
      .addColumn('outcome', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('payment_settlements_state')
      .on('payment_settlements')
      .columns(['state', 'lease_until'])
      .execute();
    await db.schema.alterTable('donations').addColumn('member_id', 'text').execute();
    await db.schema.alterTable('donations').addColumn('network', 'text').execute();
    await db.schema.alterTable('donations').addColumn('asset', 'text').execute();
    await db.schema.alterTable('donations').addColumn('amount_atomic', 'text').execute();
    await db.schema.alterTable('donations').addColumn('payer', 'text').execute();
    await db.schema.alterTable('donations').addColumn('transaction_ref', 'text').execute();
    await db.schema.alterTable('donations').addColumn('payment_key', 'text').execute();
    // NULL for donations recorded before x402 (seeded, imported): both engines let NULLs repeat.
    await db.schema
      .createIndex('donations_payment_key')
      .on('donations')
      .column('payment_key')
      .unique()
      .execute();
  },
};
