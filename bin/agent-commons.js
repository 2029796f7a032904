#!/usr/bin/env node
// Runs the TypeScript sources directly, so a fresh clone needs no build step: through Node's own type
// stripping on every supported line (the sources use only erasable syntax, tsconfig.json checks it),
// or through tsx where stripping is switched off (--no-experimental-strip-types).
import { assertSupportedNode } from './supported-node.js';

assertSupportedNode();
if (!process.features.typescript) {
  const { register } = await import('tsx/esm/api');
  register();
}
await import('../src/main.ts');
