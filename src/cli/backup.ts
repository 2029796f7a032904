// `agent-commons backup FILE`: a consistent copy of the embedded database, taken while the server
// runs. SQLite's online backup API copies the pages a step at a time; a write by the server between
// steps restarts the copy from the changed page, so the file is one committed state, never a torn one.
// PostgreSQL has its own tool (pg_dump): docs/deployment.md#backups.
import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import type { Command } from 'commander';
import { loadConfig } from '../config.ts';
import { fail, printJson } from './command-helpers.ts';

export function registerBackupCommand(program: Command): void {
  program
    .command('backup <file>')
    .description('copy the embedded (SQLite) database to FILE while the server runs; PostgreSQL: use pg_dump')
    .option('--force', 'replace FILE if it exists')
    .option('--json', 'print the result as JSON')
    .action(async (file: string, options: { force?: boolean; json?: boolean }) => {
      const { databaseUrl } = loadConfig(process.env, { seedDemo: false });
      if (!databaseUrl.startsWith('sqlite:'))
        fail(
          'DATABASE_URL names PostgreSQL: back it up with pg_dump --format=custom (docs/deployment.md#backups)',
        );
      const source = resolve(databaseUrl.slice('sqlite:'.length));
      const target = resolve(file);
      if (!existsSync(source)) fail(`no database at ${source}`);
      if (target === source) fail('FILE is the database itself');
      if (existsSync(target) && !options.force) fail(`${target} exists (--force replaces it)`);
      const result = await backup(source, target);
      if (options.json) printJson(result);
      else
        process.stdout.write(
          `backed up ${source} to ${target}: ${result.bytes} bytes, ${result.pages} pages, integrity ok, ${result.ms} ms\n`,
        );
    });
}

export interface BackupResult {
  file: string;
  bytes: number;
  pages: number;
  ms: number;
}

/** Copies `source` to `target` (through a temporary file, renamed once checked). */
export async function backup(source: string, target: string): Promise<BackupResult> {
  const started = Date.now();
  const partial = `${target}.partial`;
  rmSync(partial, { force: true });
  // Opened as the server opens it (a read-only handle cannot join a WAL database whose -shm it may not
  // create); nothing is written to it. busy_timeout waits out a commit in progress.
  const database = new SQLite(source, { fileMustExist: true });
  database.pragma('busy_timeout = 5000');
  let pages: number;
  try {
    ({ totalPages: pages } = await database.backup(partial));
  } finally {
    database.close();
  }
  const copy = new SQLite(partial);
  try {
    // The copy is a standalone file: no WAL beside it, checked before it replaces anything.
    copy.pragma('journal_mode = DELETE');
    const check = copy.pragma('integrity_check', { simple: true });
    if (check !== 'ok') fail(`the copy failed its integrity check: ${String(check)}`);
  } finally {
    copy.close();
  }
  renameSync(partial, target);
  return { file: target, bytes: statSync(target).size, pages, ms: Date.now() - started };
}
