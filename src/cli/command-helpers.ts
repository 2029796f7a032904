import { loadConfig } from '../config.ts';
import { createDeps } from '../deps.ts';
import type { Deps } from '../operations/services.ts';

/** Opens the database named by DATABASE_URL (migrated, never auto-seeded), runs the command, closes it. */
export async function withDeps<T>(run: (deps: Deps) => Promise<T>): Promise<T> {
  const deps = await createDeps(loadConfig(process.env, { seedDemo: false }), { listenForChanges: false });
  try {
    return await run(deps);
  } finally {
    await deps.close();
  }
}

export function fail(message: string): never {
  process.stderr.write(`error: ${message}\n`);
  process.exit(1);
}

export function printTable(records: object[], columns: string[]): void {
  const rows = records as Record<string, unknown>[];
  if (rows.length === 0) {
    process.stdout.write('(none)\n');
    return;
  }
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c] ?? '').length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  process.stdout.write(`${line(columns)}\n`);
  for (const row of rows) process.stdout.write(`${line(columns.map((c) => String(row[c] ?? '')))}\n`);
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
