import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import { engineOf } from './0004-member-operations.ts';

/** The channel every PostgreSQL instance listens on to empty its lookup cache (storage/engine/auth-listener.ts). */
export const AUTH_CHANGES_CHANNEL = 'agent_commons_auth';

/**
 * PostgreSQL: every committed change to what a token, session or tier-status lookup reads sends one
 * notification, whoever wrote it (an instance, the CLI, an operator's SQL). PostgreSQL delivers it
 * after the commit and folds repeats within one transaction into one. Left out, since no cached
 * answer can depend on them: a token's last-use stamp (the only write on the request path), and a
 * new token or session (only found lookups are cached, by the secret's hash), so a sign-in does not
 * empty every instance's cache. The embedded engine needs none of this (its cache sees every
 * process's commits through data_version).
 */
export const authNotify: Migration = {
  async up(db: Kysely<any>) {
    if ((await engineOf(db)) !== 'postgres') return;
    await sql
      .raw(`
        create function agent_commons_auth_changed() returns trigger language plpgsql as $$
        begin
          perform pg_notify('${AUTH_CHANGES_CHANNEL}', '');
          return null;
        end $$`)
      .execute(db);
    const changes: Record<string, string> = {
      members: 'insert or update or delete or truncate',
      tier_requests: 'insert or update or delete or truncate',
      sessions: 'update or delete or truncate',
      tokens: 'delete or truncate',
    };
    for (const [table, events] of Object.entries(changes)) {
      await sql
        .raw(`create trigger ${table}_auth_changed after ${events} on ${table}
              for each statement execute function agent_commons_auth_changed()`)
        .execute(db);
    }
    await sql
      .raw(`create trigger tokens_auth_updated after update on tokens for each row
            when ((to_jsonb(old) - 'last_used_at') is distinct from (to_jsonb(new) - 'last_used_at'))
            execute function agent_commons_auth_changed()`)
      .execute(db);
  },
};
