// The source has no import circles: every module can be read knowing only the ones below it.
// Type-only imports count too (they tie the modules' meaning together as much as values do).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../src', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** Relative imports and re-exports of a file, resolved to absolute paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [
    ...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s*['"](\.[^'"]+)['"]/g),
  ].map((match) => match[1]);
  const dynamic = [...text.matchAll(/import\(\s*['"](\.[^'"]+)['"]\s*\)/g)].map((match) => match[1]);
  return [...specifiers, ...dynamic].map((specifier) => resolve(dirname(file), specifier));
}

function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'visiting');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (state.get(next) === 'visiting') found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return found;
}

test('no import circle in src/ (type-only and dynamic imports included)', () => {
  const graph = new Map(sourceFiles(SRC).map((file) => [file, importsOf(file)]));
  assert.ok(graph.size > 100, `read ${graph.size} files`);
  const circles = cycles(graph).map((cycle) => cycle.map((file) => relative(SRC, file)).join(' → '));
  assert.deepEqual(circles, []);
});

/**
 * The layers, top to bottom (docs/development.md draws them): a module imports from its own layer
 * or a lower one, never a higher one. Paths are relative to src/; a directory covers what is in it.
 */
const LAYERS: string[][] = [
  ['main.ts', 'cli/'],
  ['app.ts', 'deps.ts', 'workers/'],
  ['surfaces/'],
  ['web/'],
  ['operations/'],
  ['domain/'],
  ['core/'],
  ['storage/', 'outbound.ts'],
  ['http/', 'config.ts', 'config/', 'clock.ts', 'secrets.ts', 'memory-trim.ts'],
];

function layerOf(path: string): number {
  const index = LAYERS.findIndex((members) =>
    members.some((member) => (member.endsWith('/') ? path.startsWith(member) : path === member)),
  );
  assert.notEqual(index, -1, `src/${path} belongs to no layer: add it to LAYERS and docs/development.md`);
  return index;
}

test('every import points down the layers (or stays in its own)', () => {
  const upward: string[] = [];
  for (const file of sourceFiles(SRC)) {
    const from = relative(SRC, file);
    for (const target of importsOf(file)) {
      const to = relative(SRC, target);
      if (to.startsWith('..')) continue;
      if (layerOf(to) < layerOf(from)) upward.push(`${from} → ${to}`);
    }
  }
  assert.deepEqual(upward, []);
});

/**
 * The areas of the domain (its directories) import one another one way too: a module-level graph
 * can be free of circles while two areas still lean on each other through different files.
 */
test('the areas of src/domain import one another one way', () => {
  const DOMAIN = join(SRC, 'domain');
  const areaOf = (file: string) => relative(DOMAIN, file).split('/')[0];
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(DOMAIN)) {
    const from = areaOf(file);
    const targets = importsOf(file)
      .filter((target) => !relative(DOMAIN, target).startsWith('..'))
      .map(areaOf)
      .filter((to) => to !== from);
    graph.set(from, [...(graph.get(from) ?? []), ...targets]);
  }
  assert.ok(graph.has('auth') && graph.has('members'), `read the areas ${[...graph.keys()].join(', ')}`);
  assert.deepEqual(
    cycles(graph).map((cycle) => cycle.join(' → ')),
    [],
  );
});
