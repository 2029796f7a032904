// npm run docs: rewrites docs/api-reference.md from the operation registry.
import { writeFileSync } from 'node:fs';
import { DEFAULT_LIMITS, loadConfig } from '../src/config.ts';
import type { Deps } from '../src/deps.ts';
import { DEFAULT_TIERS, TierLadder } from '../src/domain/auth/tiers.ts';
import { OPERATIONS } from '../src/operations/registry.ts';
import { renderMarkdownReference } from '../src/surfaces/markdown-reference.ts';

/** The documented defaults, whatever this shell's environment says. */
export function defaultDeps(): Deps {
  const config = loadConfig({}, { limits: { ...DEFAULT_LIMITS } });
  return { config, tiers: new TierLadder(DEFAULT_TIERS) } as Deps;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  writeFileSync('docs/api-reference.md', renderMarkdownReference(defaultDeps(), OPERATIONS));
  console.log('wrote docs/api-reference.md');
}
