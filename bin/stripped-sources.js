// Serves the service's TypeScript sources with their types already stripped, so the serving process
// never loads Node's type stripper: that stripper (a WebAssembly build of swc) stays resident once
// loaded, 18 MB of an idle instance (docs/decisions.md, "Libraries").
// The stripped text of each source is kept under node_modules/.cache, named by a digest of the
// source, and written by a short child process whenever a source has none. The stripper replaces
// types with spaces, so every line and column, and so every stack trace, is as in the source. A
// source without its stripped text (a read-only install, a file added while running) is loaded by
// Node's own stripping, as without this module.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import module from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const sourceDir = join(root, 'src');
export const strippedDir = join(root, 'node_modules', '.cache', 'agent-commons-sources');

/** Names a source's stripped text: its text and the Node that stripped it (a newer stripper may differ). */
export function digestOf(text) {
  return createHash('sha256').update(process.version).update('\0').update(text).digest('hex').slice(0, 40);
}

/** Every TypeScript source of the service: its file URL and the digest of its text. */
export function currentSources() {
  const sources = new Map();
  for (const name of readdirSync(sourceDir, { recursive: true })) {
    if (!name.endsWith('.ts')) continue;
    const path = join(sourceDir, name);
    sources.set(pathToFileURL(path).href, digestOf(readFileSync(path, 'utf8')));
  }
  return sources;
}

function strippedText(digest) {
  try {
    return readFileSync(join(strippedDir, `${digest}.js`), 'utf8');
  } catch {
    return undefined;
  }
}

/** Loads the sources from their stripped texts from now on (every supported Node has the hooks). */
export function useStrippedSources() {
  const sources = currentSources();
  const unstripped = [...sources.values()].some((digest) => strippedText(digest) === undefined);
  if (unstripped) {
    spawnSync(
      process.execPath,
      ['--no-warnings', fileURLToPath(new URL('strip-sources.js', import.meta.url))],
      {
        stdio: 'ignore',
      },
    );
  }
  module.registerHooks({
    load(url, context, nextLoad) {
      const digest = sources.get(url);
      const source = digest && strippedText(digest);
      if (!source) return nextLoad(url, context);
      return { format: 'module', source, shortCircuit: true };
    },
  });
}
