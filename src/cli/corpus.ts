import { randomBytes } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import {
  type DocumentMetadata,
  ingest,
  listDocuments,
  reindex,
  removeDocument,
} from '../domain/research/corpus.ts';
import { FORMATS, formatOf, isSource } from '../domain/research/document.ts';
import { fetchSource, isUrl, refusedUrl } from '../domain/research/read-source.ts';
import type { Deps } from '../operations/services.ts';
import { corpusQueue } from '../storage/corpus-queue.ts';
import { fail, printJson, printTable, withDeps } from './command-helpers.ts';

/**
 * A directory stands for the readable files inside it (recursively); paths and URLs stand for
 * themselves. A target that cannot be read (another scheme than http(s), a malformed URL, a missing
 * path) ends the command with one line before anything is ingested.
 */
function expandTargets(targets: string[]): string[] {
  return targets.flatMap((target) => {
    const refused = refusedUrl(target);
    if (refused) fail(refused);
    if (isUrl(target)) return [target];
    const path = resolve(target);
    try {
      if (!statSync(path).isDirectory()) return [path];
      return readdirSync(path, { recursive: true, encoding: 'utf8' })
        .map((name) => join(path, name))
        .filter((file) => statSync(file).isFile() && /\.(txt|md|markdown|html?|xhtml|pdf)$/i.test(file))
        .sort();
    } catch (error) {
      const { code, message } = error as NodeJS.ErrnoException;
      return fail(`${target}: ${code === 'ENOENT' ? 'no such file or directory' : message}`);
    }
  });
}

function metadataFrom(options: Record<string, string | undefined>): DocumentMetadata {
  if (!options.source || !isSource(options.source)) fail('--source must be paper or book');
  const year = options.year === undefined ? undefined : Number(options.year);
  if (year !== undefined && !Number.isInteger(year)) fail('--year must be a year');
  // Readers are sent there: only a web address, never javascript: or a local file.
  if (options.url !== undefined && (!isUrl(options.url) || refusedUrl(options.url))) {
    fail(`--url must be an http or https URL, not ${options.url}`);
  }
  return { source: options.source, title: options.title, authors: options.authors, year, url: options.url };
}

/** Ingests each target with a progress bar (documents, passages, passages per second) on a terminal. */
async function addAll(deps: Deps, files: string[], metadata: DocumentMetadata, json: boolean) {
  const bar = new cliProgress.SingleBar(
    {
      format: 'ingesting [{bar}] {value}/{total} documents | {passages} passages | {rate} passages/s',
      noTTYOutput: false,
      stream: process.stderr,
    },
    cliProgress.Presets.shades_classic,
  );
  const started = Date.now();
  let passages = 0;
  if (process.stderr.isTTY && !json) bar.start(files.length, 0, { passages: 0, rate: 0 });
  const outcomes = [];
  const failures: string[] = [];
  for (const file of files) {
    try {
      // A title, URL or year given on the command line names one document, not a whole directory.
      const own = files.length === 1 ? metadata : { ...metadata, title: undefined, url: undefined };
      const outcome = await ingest(deps, await fetchSource(file, deps.config.research), own);
      outcomes.push({ target: file, ...outcome });
      if (outcome.status !== 'unchanged') passages += outcome.passages;
    } catch (error) {
      outcomes.push({ target: file, status: 'failed', error: (error as Error).message });
      if (!json) failures.push(`error: ${file}: ${(error as Error).message}`);
    }
    const seconds = Math.max(0.001, (Date.now() - started) / 1000);
    bar.increment({ passages, rate: Math.round(passages / seconds) });
  }
  bar.stop();
  const seconds = (Date.now() - started) / 1000;
  if (json) printJson({ documents: outcomes, passages, seconds });
  else {
    printTable(outcomes, ['status', 'passages', 'title', 'target']);
    process.stdout.write(
      `${passages} passages in ${seconds.toFixed(1)} s (${Math.round(passages / Math.max(seconds, 0.001))}/s)\n`,
    );
  }
  // The table has no room for the reasons: each failed target's goes to stderr, one line.
  for (const line of failures) process.stderr.write(`${line}\n`);
  if (outcomes.some((o) => o.status === 'failed')) process.exitCode = 1;
}

/** Corpus ingestion for research retrieval, and the operator's review queue of URLs. */
export function registerCorpusCommands(program: Command): void {
  const corpus = program.command('corpus').description(`the research corpus (${FORMATS.join(', ')})`);
  corpus
    .command('add <targets...>')
    .description('read files, directories or URLs into the corpus; re-adding a changed one replaces it')
    .requiredOption('--source <source>', 'paper or book')
    .option('--title <title>', 'instead of the title the document names')
    .option('--authors <names>')
    .option('--year <year>')
    .option('--url <url>', 'where readers find the original')
    .option('--json', 'print JSON')
    .action((targets: string[], o) => {
      const metadata = metadataFrom(o);
      const files = expandTargets(targets);
      return withDeps((deps) => addAll(deps, files, metadata, o.json));
    });
  corpus
    .command('list')
    .option('--json', 'print JSON')
    .action((o) =>
      withDeps(async (deps) => {
        const rows = await listDocuments(deps);
        o.json ? printJson(rows) : printTable(rows, ['id', 'source', 'passage_count', 'year', 'title']);
      }),
    );
  corpus
    .command('remove <idOrPath>')
    .description('remove a document by id, path or URL')
    .action((target: string) =>
      withDeps(async (deps) => {
        const key = isUrl(target) || target.startsWith('doc_') ? target : resolve(target);
        if (!(await removeDocument(deps, key))) fail(`no document ${target}`);
        process.stdout.write(`removed ${target}\n`);
      }),
    );
  corpus
    .command('reindex')
    .description('make every instance rebuild its search index from the stored passages')
    .action(() =>
      withDeps(async (deps) => {
        process.stdout.write(`reindexed ${await reindex(deps)} passages\n`);
      }),
    );

  const queue = corpus.command('queue').description('URLs waiting for an operator to review them');
  queue
    .command('add <url>')
    .requiredOption('--source <source>', 'paper or book')
    .option('--note <text>')
    .action((url: string, o) =>
      withDeps(async (deps) => {
        if (!isUrl(url) || refusedUrl(url)) {
          fail(refusedUrl(url) ?? `${url}: only http(s) URLs are queued; add local files directly`);
        }
        const { source } = metadataFrom(o);
        const id = `cq_${randomBytes(6).toString('hex')}`;
        await corpusQueue.add(deps.db, {
          id,
          url,
          source,
          note: o.note ?? null,
          created_at: deps.clock.now(),
        });
        process.stdout.write(`queued ${id} (${formatOf(url)})\n`);
      }),
    );
  queue
    .command('list')
    .option('--status <status>', 'pending, ingested or rejected', 'pending')
    .option('--json', 'print JSON')
    .action((o) =>
      withDeps(async (deps) => {
        const rows = await corpusQueue.withStatus(deps.db, o.status);
        o.json ? printJson(rows) : printTable(rows, ['id', 'source', 'url', 'note']);
      }),
    );
  queue
    .command('approve <id>')
    .description('fetch the queued URL and ingest it')
    .action((id: string) =>
      withDeps(async (deps) => {
        const item = await corpusQueue.pending(deps.db, id);
        if (!item || !isSource(item.source)) fail(`no pending item ${id}`);
        const source = item.source;
        const outcome = await fetchSource(item.url, deps.config.research)
          .then((fetched) => ingest(deps, fetched, { source, url: item.url }))
          .catch((error: Error) => fail(`${id} not ingested: ${error.message}`));
        await corpusQueue.markIngested(deps.db, id, outcome.id, deps.clock.now());
        process.stdout.write(`ingested ${id} as ${outcome.id}: ${outcome.passages} passages\n`);
      }),
    );
  queue.command('reject <id>').action((id: string) =>
    withDeps(async (deps) => {
      if (!(await corpusQueue.reject(deps.db, id, deps.clock.now()))) fail(`no pending item ${id}`);
      process.stdout.write(`rejected ${id}\n`);
    }),
  );
}
