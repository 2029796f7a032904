// Writes the stripped text of every service source that has none yet (see stripped-sources.js). Run
// as its own short process, so the stripper's memory leaves with it. Each text is written to a
// temporary name and renamed, so a process starting beside this one never reads half a file.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import module from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { currentSources, strippedDir } from './stripped-sources.js';

mkdirSync(strippedDir, { recursive: true });
for (const [url, digest] of currentSources()) {
  const target = join(strippedDir, `${digest}.js`);
  try {
    readFileSync(target);
    continue;
  } catch {}
  let stripped;
  try {
    stripped = module.stripTypeScriptTypes(readFileSync(fileURLToPath(url), 'utf8'), { mode: 'strip' });
  } catch {
    // Not strippable (a syntax error): Node's own loading reports it where it is imported.
    continue;
  }
  const temporary = `${target}.${process.pid}`;
  writeFileSync(temporary, stripped);
  renameSync(temporary, target);
}
