#!/usr/bin/env node
import module from 'node:module';
import { useStrippedSources } from './stripped-sources.js';
// Runs the TypeScript sources directly with plain node, so a fresh clone needs no build step and no
// loader package: stripped of their types ahead of loading (stripped-sources.js), or by Node's own
// type stripping for a source without its stripped text (the sources use only erasable syntax,
// tsconfig.json checks it).
import { assertSupportedNode } from './supported-node.js';

assertSupportedNode();
useStrippedSources();
await import('../src/main.ts');
// Where NODE_COMPILE_CACHE names a directory (the test runner sets one), what start-up compiled is kept
// now: a server ends by a signal, and Node writes its compile cache only at a normal exit.
module.flushCompileCache();
