import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';

const PREFIX = 'agent-commons-corpus-';

/** The host as it may appear in a file name (letters, digits, dots and dashes). */
function hostTag(): string {
  return hostname().replace(/[^A-Za-z0-9.-]/g, '_') || 'host';
}

/** `agent-commons-corpus-<host>-<pid>-<six random characters>` (mkdtemp's suffix). */
const NAME = /^agent-commons-corpus-(.+)-([1-9][0-9]*)-[A-Za-z0-9]{6}$/;

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A directory for an instance's temporary corpus copy (no RESEARCH_INDEX_DIR), named after the host
 * and process that made it. Close removes it; a process that never closed (kill -9, a crash, a
 * power cut) leaves it behind, up to a gigabyte per million passages, so each new one first removes
 * the copies in the same directory that this host's dead processes left. A copy of another host (a
 * temporary directory shared between containers) or of a process still running is never touched.
 */
export function makeTemporaryCopyDir(): string {
  const parent = tmpdir();
  removeAbandonedCopies(parent);
  return mkdtempSync(join(parent, `${PREFIX}${hostTag()}-${process.pid}-`));
}

/** Removes the copies this host's dead processes left in `parent`; returns their names. */
export function removeAbandonedCopies(parent: string): string[] {
  const host = hostTag();
  const removed: string[] = [];
  let entries: string[];
  try {
    entries = readdirSync(parent);
  } catch {
    return removed;
  }
  for (const entry of entries) {
    const match = NAME.exec(entry);
    if (!match || match[1] !== host) continue;
    const pid = Number(match[2]);
    if (pid === process.pid || isRunning(pid)) continue;
    rmSync(join(parent, entry), { recursive: true, force: true });
    removed.push(entry);
  }
  return removed;
}
