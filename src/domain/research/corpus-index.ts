import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { SQLITE_PASSAGES_TABLE } from '../../storage/corpus-passages.ts';
import type { Database } from '../../storage/database.ts';
import { PassageIndex } from './passage-index.ts';

/** Bumped by every change to the corpus: per-instance indexes compare it to know they are stale. */
export const GENERATION_KEY = 'corpus_generation';

/** What a search reads: the in-memory index and the database holding the passages it points to. */
export interface CorpusSearcher {
  db: SQLite.Database;
  index: PassageIndex;
}

export interface CorpusIndex {
  searcher(): Promise<CorpusSearcher>;
  /** Starts building the index now rather than at the first search. */
  warm(): void;
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
 * Each instance keeps the research index in memory and rebuilds it whenever the corpus generation
 * moved (one indexed read per search tells). The embedded engine reads its own tables; on PostgreSQL
 * each instance first brings a local SQLite copy of the passages up to date.
 */
export function openCorpusIndex(
  database: Database,
  options: { waitForRebuildMs?: number } = {},
): CorpusIndex {
  return new IndexedCorpus(
    database.sqlite ? new EmbeddedPassages(database.sqlite) : new PostgresCorpusCopy(database),
    options.waitForRebuildMs ?? WAIT_FOR_REBUILD_MS,
  );
}

class IndexedCorpus implements CorpusIndex {
  private current: { generation: string; searcher: CorpusSearcher } | undefined;
  private rebuilding: Promise<CorpusSearcher> | undefined;

  constructor(
    private readonly store: PassageStore,
    private readonly waitForRebuildMs: number,
  ) {}

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

  warm(): void {
    this.searcher().catch(() => {});
  }

  private async rebuild(generation: string): Promise<CorpusSearcher> {
    const db = await this.store.reader(generation);
    const searcher = { db, index: await PassageIndex.build(db) };
    this.current = { generation, searcher };
    return searcher;
  }

  close(): void {
    this.store.close();
  }
}

class EmbeddedPassages implements PassageStore {
  private read: SQLite.Statement | undefined;

  constructor(private readonly sqlite: SQLite.Database) {}

  async generation(): Promise<string> {
    // Prepared at first use: the settings table exists only once the migrations have run.
    this.read ??= this.sqlite.prepare('select value from settings where key = ?').pluck();
    return String(this.read.get(GENERATION_KEY) ?? '0');
  }

  async reader(): Promise<SQLite.Database> {
    return this.sqlite;
  }

  close(): void {}
}

const COPY_DDL = [
  SQLITE_PASSAGES_TABLE,
  'create table corpus_documents (id text primary key, source text not null, title text not null, authors text not null, year integer, url text, revision integer not null)',
];

/** A local SQLite copy of the passages, brought up to date from PostgreSQL document by document. */
class PostgresCorpusCopy implements PassageStore {
  private readonly dir = mkdtempSync(join(tmpdir(), 'agent-commons-corpus-'));
  private readonly local: SQLite.Database;
  private copied: string | undefined;
  private syncing: Promise<void> | undefined;

  constructor(private readonly database: Database) {
    this.local = new SQLite(join(this.dir, 'corpus.db'));
    this.local.pragma('journal_mode = WAL');
    this.local.pragma('synchronous = OFF');
    for (const statement of COPY_DDL) this.local.exec(statement);
  }

  async generation(): Promise<string> {
    const row = await this.database.db
      .selectFrom('settings')
      .select('value')
      .where('key', '=', GENERATION_KEY)
      .executeTakeFirst();
    return row?.value ?? '0';
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
    const remote = await db.selectFrom('corpus_documents').selectAll().execute();
    const localRevisions = new Map(
      (
        this.local.prepare('select id, revision from corpus_documents').all() as {
          id: string;
          revision: number;
        }[]
      ).map((r) => [r.id, r.revision]),
    );
    const wanted = new Set(remote.map((d) => d.id));
    const dropPassages = this.local.prepare('delete from corpus_passages where document_id = ?');
    const dropDocument = this.local.prepare('delete from corpus_documents where id = ?');
    const addDocument = this.local.prepare(
      'insert into corpus_documents (id, source, title, authors, year, url, revision) values (?, ?, ?, ?, ?, ?, ?)',
    );
    const addPassage = this.local.prepare(
      'insert into corpus_passages (id, document_id, position, source, title, section, body) values (?, ?, ?, ?, ?, ?, ?)',
    );
    this.local.transaction(() => {
      for (const id of localRevisions.keys()) {
        if (wanted.has(id)) continue;
        dropPassages.run(id);
        dropDocument.run(id);
      }
    })();
    for (const doc of remote) {
      if (localRevisions.get(doc.id) === Number(doc.revision)) continue;
      const passages = await db
        .selectFrom('corpus_passages')
        .selectAll()
        .where('document_id', '=', doc.id)
        .orderBy('position')
        .execute();
      this.local.transaction(() => {
        dropPassages.run(doc.id);
        dropDocument.run(doc.id);
        addDocument.run(doc.id, doc.source, doc.title, doc.authors, doc.year, doc.url, Number(doc.revision));
        for (const p of passages)
          addPassage.run(Number(p.id), p.document_id, p.position, p.source, p.title, p.section, p.body);
      })();
    }
    this.copied = generation;
  }

  close(): void {
    this.local.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
