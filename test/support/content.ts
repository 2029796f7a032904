import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEMO_CONTENT_DIR } from '../../src/domain/demo/seed.ts';

/** A writable copy of the demo content folder, plus extra files (path relative to the folder → text). */
export function contentFolder(extra: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'agent-commons-content-'));
  cpSync(DEMO_CONTENT_DIR, dir, { recursive: true });
  for (const [path, text] of Object.entries(extra)) writeFileSync(join(dir, path), text);
  return dir;
}

/** An issue whose text tries to break out of the feed's HTML and XML. */
export const HOSTILE_ISSUE = `---
title: Fish & Chips <night>
date: 2026-08-01
summary: "Quotes ' and \\" & ampersands"
---
Intro with <script>alert(1)</script> and a [bad link](javascript:alert(1)).

## Menu & prices {#menu}

Cod <b>and</b> chips: 5 & 6 USD.\u0001
`;
