import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import { REFUSE_FUNCTION, REFUSED_WRITE } from '../engine/refusals.ts';
import { engineOf } from './0004-member-operations.ts';

/** PostgreSQL: the function through which a statement refuses to write (src/storage/engine/refusals.ts). */
export const refusals: Migration = {
  async up(db: Kysely<any>) {
    if ((await engineOf(db)) !== 'postgres') return;
    await sql
      .raw(`
        create function ${REFUSE_FUNCTION}(reason text) returns bigint language plpgsql as $$
        begin
          raise exception using errcode = '${REFUSED_WRITE}', message = reason;
        end $$`)
      .execute(db);
  },
};
