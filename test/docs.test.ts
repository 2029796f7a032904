import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { defaultDeps } from '../scripts/render-docs.ts';
import { OPERATIONS } from '../src/operations/registry.ts';
import { withErrorTable } from '../src/surfaces/error-table.ts';
import { renderMarkdownReference } from '../src/surfaces/markdown-reference.ts';

test('docs/api-reference.md is what the registry renders (run npm run docs after changing an operation)', () => {
  const committed = readFileSync('docs/api-reference.md', 'utf8');
  assert.equal(committed, renderMarkdownReference(defaultDeps(), OPERATIONS));
  for (const op of OPERATIONS) assert.ok(committed.includes(`\`${op.id}\``), op.id);
});

test('the error table of docs/api.md is what the error catalogue renders (run npm run docs after changing a code)', () => {
  const committed = readFileSync('docs/api.md', 'utf8');
  assert.equal(committed, withErrorTable(committed));
});
