#!/usr/bin/env node
import module from 'node:module';
import { useStrippedSources } from './stripped-sources.js';
// Runs the TypeScript sources directly, so a fresh clone needs no build step: stripped of their types
// ahead of loading (stripped-sources.js), or by Node's own type stripping where that cannot be used
// (the sources use only erasable syntax, tsconfig.json checks it), or through tsx where stripping is
// switched off (--no-experimental-strip-types).
import { assertSupportedNode } from './supported-node.js';

assertSupportedNode();
if (process.features.typescript) {
  useStrippedSources();
} else {
  const { register } = await import('tsx/esm/api');
  register();
}
await import('../src/main.ts');
// Where NODE_COMPILE_CACHE names a directory (the test runner sets one), what start-up compiled is kept
// now: a server ends by a signal, and Node writes its compile cache only at a normal exit.
module.flushCompileCache?.();
