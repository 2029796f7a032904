#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx, so a fresh clone needs no build step.
import { assertSupportedNode } from './supported-node.js';

assertSupportedNode();
const { register } = await import('tsx/esm/api');
register();
await import('../src/main.ts');
