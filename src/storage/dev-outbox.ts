import type { Executor } from './schema.ts';

// The development outbox's key, kept in the settings table so that it outlives a restart.

const OUTBOX_KEY_SETTING = 'dev_outbox_key';

export const devOutbox = {
  /** Keeps `candidate` as the key unless one is kept already; answers the key kept. */
  async keepKey(executor: Executor, candidate: string): Promise<string> {
    await executor
      .insertInto('settings')
      .values({ key: OUTBOX_KEY_SETTING, value: candidate })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
    const row = await executor
      .selectFrom('settings')
      .select('value')
      .where('key', '=', OUTBOX_KEY_SETTING)
      .executeTakeFirstOrThrow();
    return row.value;
  },
};
