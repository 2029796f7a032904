import { accessSync, constants, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type SQLite from 'better-sqlite3';
import { StartRefused } from '../../core/errors.ts';
import { corpus } from '../../storage/corpus.ts';
import { corpusCopy } from '../../storage/corpus-copy.ts';
import type { Database } from '../../storage/database.ts';
import { type IndexStamp, readIndexFile, writeIndexFile } from './index-file.ts';
import { PassageIndex } from './passage-index.ts';
import { makeTemporaryCopyDir } from './temporary-copy.ts';

/** What a search reads: the in-memory index and the database holding the passages it points to. */
export interface CorpusSearcher {
  db: SQLite.Database;
  index: PassageIndex;
}

/** The index this instance answers from (for metrics); undefined until the first build finished. */
export interface CorpusIndexState {
  generation: string;
  passages: number;
  buildMs: number;
  /** Epoch milliseconds when that build finished. */
  builtAt: number;
  /** A newer generation is being built now. */
  rebuilding: boolean;
  /** Built from the passages at this start, or read back from the index file. */
  from: 'passages' | 'file';
}

export interface CorpusIndex {
  searcher(): Promise<CorpusSearcher>;
  state(): CorpusIndexState | undefined;
  /**
   * Builds (or reads back) the index now rather than at the first search; resolves when it is ready
   * or could not be built.
   */
  warm(): Promise<void>;
  close(): void;
}

/** Where the passages live, and the generation that every corpus change bumps. */
interface PassageStore {
  generation(): Promise<string>;
  /** The SQLite database holding the passages of that generation. */
  reader(generation: string): Promise<SQLite.Database>;
  close(): void;
}

/**
 * A search waits for a rebuild when the last build took less than this; past it, searches answer from
 * the previous generation's index while the new one is built, rather than stalling for seconds.
 */
const WAIT_FOR_REBUILD_MS = 1_000;

/**
 * What a stored index must match: the generation every corpus change bumps, and the passage table's
 * count and highest id (read before the build, so a passage added meanwhile makes the file stale).
 */
function stampOf(db: SQLite.Database, generation: string): IndexStamp {
  return { generation, ...corpusCopy.stamp(db) };
}

/** Where an instance keeps what it may reuse at its next start (docs/research.md, "The index"). */
export interface CorpusIndexOptions {
  waitForRebuildMs?: number;
  /**
   * RESEARCH_INDEX_DIR: the index file (and, on PostgreSQL, the local copy of the passages). Unset:
   * the index file sits beside an embedded database file, and a PostgreSQL instance keeps both in a
   * temporary directory, so it rebuilds at every start.
   */
  dir?: string;
}

/** The index file's name, in RESEARCH_INDEX_DIR or beside the embedded database (`<file>.research-index`). */
const INDEX_FILE = 'research-index';

/** RESEARCH_INDEX_DIR made if missing and checked writable now, rather than at the first build. */
function usableDirectory(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
  } catch (error) {
    throw new StartRefused(
      `RESEARCH_INDEX_DIR ${dir} is not a directory this process can write to ` +
        `(${(error as NodeJS.ErrnoException).code ?? (error as Error).message}). Point it at one, or unset it.`,
    );
  }
}

/**
 * Each instance keeps the research index in memory and rebuilds it whenever the corpus generation
 * moved (one indexed read per search tells). The embedded engine reads its own tables; on PostgreSQL
 * each instance first brings a local SQLite copy of the passages up to date. A build is stored in the
 * index file, and the next start reads it back when it was built from the same corpus.
 */
export function openCorpusIndex(database: Database, options: CorpusIndexOptions = {}): CorpusIndex {
  if (options.dir) usableDirectory(options.dir);
  const store: PassageStore = database.sqlite
    ? new EmbeddedPassages(database.sqlite)
    : new PostgresCorpusCopy(database, options.dir);
  const beside =
    database.sqlite && database.location !== ':memory:' ? `${database.location}.${INDEX_FILE}` : undefined;
  // A PostgreSQL instance without RESEARCH_INDEX_DIR keeps no file: its copy is temporary, so the
  // next start rebuilds anyway.
  const file = options.dir ? join(options.dir, INDEX_FILE) : beside;
  return new IndexedCorpus(store, options.waitForRebuildMs ?? WAIT_FOR_REBUILD_MS, file);
}

class IndexedCorpus implements CorpusIndex {
  private current:
    | { generation: string; searcher: CorpusSearcher; builtAt: number; from: 'passages' | 'file' }
    | undefined;
  private rebuilding: Promise<CorpusSearcher> | undefined;
  private readonly store: PassageStore;
  private readonly waitForRebuildMs: number;
  private readonly file: string | undefined;

  constructor(store: PassageStore, waitForRebuildMs: number, file: string | undefined) {
    this.store = store;
    this.waitForRebuildMs = waitForRebuildMs;
    this.file = file;
  }

  async searcher(): Promise<CorpusSearcher> {
    const generation = await this.store.generation();
    const current = this.current;
    if (current?.generation === generation) return current.searcher;
    // Concurrent searches share one rebuild.
    this.rebuilding ??= this.rebuild(generation).finally(() => {
      this.rebuilding = undefined;
    });
    if (current && current.searcher.index.buildMs > this.waitForRebuildMs) {
      // Nobody waits for this rebuild: a failure (the database gone for a moment) must not become an
      // unhandled rejection. The previous index keeps answering and the next search tries again.
      this.rebuilding.catch(() => {});
      return current.searcher;
    }
    return this.rebuilding;
  }

  warm(): Promise<void> {
    return this.searcher().then(
      () => {},
      () => {},
    );
  }

  private async rebuild(generation: string): Promise<CorpusSearcher> {
    const db = await this.store.reader(generation);
    const stamp = stampOf(db, generation);
    const stored = this.file ? readIndexFile(this.file, stamp) : undefined;
    const index = stored ? new PassageIndex(stored) : await PassageIndex.build(db);
    // Stored for the next start; a failure to store (a full disk) only costs that start a rebuild.
    if (!stored && this.file) await writeIndexFile(this.file, index.parts(), stamp).catch(() => {});
    const searcher = { db, index };
    this.current = { generation, searcher, builtAt: Date.now(), from: stored ? 'file' : 'passages' };
    return searcher;
  }

  state(): CorpusIndexState | undefined {
    const current = this.current;
    if (!current) return undefined;
    const { index } = current.searcher;
    return {
      generation: current.generation,
      passages: index.size,
      buildMs: index.buildMs,
      builtAt: current.builtAt,
      rebuilding: this.rebuilding !== undefined,
      from: current.from,
    };
  }

  close(): void {
    this.store.close();
  }
}

class EmbeddedPassages implements PassageStore {
  private readonly sqlite: SQLite.Database;

  constructor(sqlite: SQLite.Database) {
    this.sqlite = sqlite;
  }

  async generation(): Promise<string> {
    return corpusCopy.generation(this.sqlite);
  }

  async reader(): Promise<SQLite.Database> {
    return this.sqlite;
  }

  close(): void {}
}

/**
 * A local SQLite copy of the passages, brought up to date from PostgreSQL document by document. In
 * RESEARCH_INDEX_DIR it outlives the process (the next start copies only what changed); otherwise it
 * lives in a temporary directory removed at close (or by a later start, if the process died first).
 * Opened at the first build (an instance's start-up warm-up or its first search), so a process that
 * never builds, such as the CLI, makes no directory.
 */
class PostgresCorpusCopy implements PassageStore {
  private readonly keptDir: string | undefined;
  private readonly database: Database;
  private opened: { dir: string; local: SQLite.Database } | undefined;
  private copied: string | undefined;
  private syncing: Promise<void> | undefined;

  constructor(database: Database, dir: string | undefined) {
    this.database = database;
    this.keptDir = dir;
  }

  private get local(): SQLite.Database {
    if (!this.opened) {
      const dir = this.keptDir ?? makeTemporaryCopyDir();
      // A temporary copy dies with the process, so it need not survive a crash; a kept one must open.
      const local = corpusCopy.open(join(dir, 'corpus.db'), this.keptDir !== undefined);
      this.opened = { dir, local };
    }
    return this.opened.local;
  }

  async generation(): Promise<string> {
    return corpus.generation(this.database.db);
  }

  async reader(generation: string): Promise<SQLite.Database> {
    if (generation !== this.copied) {
      // Concurrent searches share one catch-up rather than each running their own.
      this.syncing ??= this.catchUp(generation).finally(() => {
        this.syncing = undefined;
      });
      await this.syncing;
    }
    return this.local;
  }

  /** Copies the documents whose revision changed and drops those that are gone. */
  private async catchUp(generation: string): Promise<void> {
    const db = this.database.db;
    const remote = await corpus.everyDocument(db);
    const localRevisions = corpusCopy.revisions(this.local);
    const wanted = new Set(remote.map((d) => d.id));
    corpusCopy.dropDocuments(
      this.local,
      [...localRevisions.keys()].filter((id) => !wanted.has(id)),
    );
    for (const doc of remote) {
      if (localRevisions.get(doc.id) === Number(doc.revision)) continue;
      const passages = await corpus.passagesOf(db, doc.id);
      corpusCopy.replaceDocument(this.local, doc, passages);
    }
    this.copied = generation;
  }

  close(): void {
    const opened = this.opened;
    if (!opened) return;
    this.opened = undefined;
    opened.local.close();
    if (!this.keptDir) rmSync(opened.dir, { recursive: true, force: true });
  }
}
