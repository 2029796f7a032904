// npm run docs: rewrites docs/api-reference.md from the operation registry, the error table of
// docs/api.md from the error catalogue and docs/configuration.md from the settings' declaration.
import { readFileSync, writeFileSync } from 'node:fs';
import { loadConfig } from '../src/config.ts';
import { DEFAULT_TIERS, TierLadder } from '../src/domain/access/tiers.ts';
import { OPERATIONS } from '../src/operations/registry.ts';
import type { Deps } from '../src/operations/services.ts';
import { withErrorTable } from '../src/surfaces/error-table.ts';
import { renderMarkdownReference } from '../src/surfaces/markdown-reference.ts';
import { renderConfigurationPage } from './configuration-page.ts';

/** The documented defaults, whatever this shell's environment says. */
export function defaultDeps(): Deps {
  const config = loadConfig({});
  return { config, tiers: new TierLadder(DEFAULT_TIERS) } as Deps;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  writeFileSync('docs/api-reference.md', renderMarkdownReference(defaultDeps(), OPERATIONS));
  writeFileSync('docs/api.md', withErrorTable(readFileSync('docs/api.md', 'utf8')));
  writeFileSync('docs/configuration.md', renderConfigurationPage());
  console.log('wrote docs/api-reference.md, the error table of docs/api.md and docs/configuration.md');
}
