import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * The browser that asked for a sign-in link: the SHA-256 of a random value kept in that browser's
 * short-lived HttpOnly cookie. Opened there, the link signs in at once; opened anywhere else (another
 * device, a mail scanner) it only shows the confirm button. Null for links from before the column.
 */
export const signInLinkBrowsers: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('sign_in_links').addColumn('browser_hash', 'text').execute();
  },
};
