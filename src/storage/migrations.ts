import { type Kysely, sql } from 'kysely';
import { type Migration, type MigrationProvider, Migrator } from 'kysely/migration';
import { initial } from './migrations/0001-initial.ts';
import { eventLogAndTierRequests } from './migrations/0002-event-log-and-tier-requests.ts';
import { signInLinks } from './migrations/0003-sign-in-links.ts';
import { memberOperations } from './migrations/0004-member-operations.ts';
import { oidcLogins } from './migrations/0005-oidc-logins.ts';
import { leaderboard } from './migrations/0006-leaderboard.ts';
import { research } from './migrations/0007-research.ts';
import { content } from './migrations/0008-content.ts';
import { signingKeys } from './migrations/0009-signing-keys.ts';
import { oauth } from './migrations/0010-oauth.ts';
import { a2aTasks } from './migrations/0011-a2a-tasks.ts';
import { payments } from './migrations/0012-payments.ts';
import { authNotify } from './migrations/0013-auth-notify.ts';
import { refusals } from './migrations/0014-refusals.ts';
import { privacy } from './migrations/0015-privacy.ts';
import { eventLogTypes } from './migrations/0016-event-log-types.ts';
import { queueIndexes } from './migrations/0017-queue-indexes.ts';
import { activityTargets } from './migrations/0018-activity-targets.ts';
import { retentionIndexes } from './migrations/0019-retention-indexes.ts';
import { dashboardRollups } from './migrations/0020-dashboard-rollups.ts';
import { listIndexes } from './migrations/0021-list-indexes.ts';
import { signInLinkBrowsers } from './migrations/0022-sign-in-link-browsers.ts';
import { writeTimeIndexes } from './migrations/0023-write-time-indexes.ts';

/**
 * Every migration in the order it runs, keyed by the name Kysely records for it in
 * `kysely_migration`. The files in src/storage/migrations/ are numbered without gaps; the recorded
 * names are those existing databases already hold, which skipped 0010: from the file 0010 on, a
 * name's number is one above its file's. A recorded name never changes (Kysely refuses a database
 * that recorded a name the code no longer declares) and names sort in the order they run, so a new
 * migration takes the next file number and the next name number (file 0016, name `0017_...`).
 * Migrations live in code (not read from disk) so the CLI, the server and tests all see one list.
 */
export const MIGRATIONS: readonly (readonly [recordedName: string, migration: Migration])[] = [
  ['0001_initial', initial],
  ['0002_event_log_and_tier_requests', eventLogAndTierRequests],
  ['0003_sign_in_links', signInLinks],
  ['0004_member_operations', memberOperations],
  ['0005_oidc_logins', oidcLogins],
  ['0006_leaderboard', leaderboard],
  ['0007_research', research],
  ['0008_content', content],
  ['0009_signing_keys', signingKeys],
  ['0011_oauth', oauth],
  ['0012_a2a_tasks', a2aTasks],
  ['0013_payments', payments],
  ['0014_auth_notify', authNotify],
  ['0015_refusals', refusals],
  ['0016_privacy', privacy],
  ['0017_event_log_types', eventLogTypes],
  ['0018_queue_indexes', queueIndexes],
  ['0019_activity_targets', activityTargets],
  ['0020_retention_indexes', retentionIndexes],
  ['0021_dashboard_rollups', dashboardRollups],
  ['0022_list_indexes', listIndexes],
  ['0023_sign_in_link_browsers', signInLinkBrowsers],
  ['0024_write_time_indexes', writeTimeIndexes],
];

const migrations: Record<string, Migration> = Object.fromEntries(MIGRATIONS);

const provider: MigrationProvider = { getMigrations: async () => migrations };

/** Runs pending migrations; on PostgreSQL Kysely holds an advisory lock, so instances booting together are safe. */
export async function migrateToLatest(db: Kysely<any>): Promise<void> {
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`migration ${failed} failed: ${(error as Error).message ?? String(error)}`);
  }
}

export async function isFreshDatabase(db: Kysely<any>): Promise<boolean> {
  const row = await sql<{ n: number }>`select count(*) as n from members`.execute(db);
  return Number(row.rows[0]?.n ?? 0) === 0;
}

/** The migrations this code declares that the database has not recorded as run (for /readyz). */
export async function pendingMigrations(db: Kysely<any>): Promise<string[]> {
  const known = await new Migrator({ db, provider }).getMigrations();
  return known.filter((migration) => migration.executedAt === undefined).map(({ name }) => name);
}
