import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { SQLITE_CORPUS_DDL } from '../../storage/corpus-fts.ts';
import type { Database } from '../../storage/database.ts';
import { GENERATION_KEY } from './corpus.ts';

/** Where retrieval reads: an SQLite database holding corpus_passages, corpus_fts and corpus_documents. */
export interface CorpusIndex {
  reader(): Promise<SQLite.Database>;
  close(): void;
}

/**
 * The embedded engine searches its own tables. On PostgreSQL each instance keeps an FTS5 copy of the
 * corpus in a temporary file and brings it up to date before a search whenever the corpus generation
 * moved (one indexed read per search). Measured against ts_rank, this keeps BM25 ranking identical on
 * both engines (docs/research.md).
 */
export function openCorpusIndex(database: Database): CorpusIndex {
  if (database.sqlite) {
    const sqlite = database.sqlite;
    return { reader: async () => sqlite, close: () => {} };
  }
  return new PostgresCorpusCopy(database);
}

const COPY_DDL = [
  ...SQLITE_CORPUS_DDL,
  'create table corpus_documents (id text primary key, source text not null, title text not null, authors text not null, year integer, url text, revision integer not null)',
];

class PostgresCorpusCopy implements CorpusIndex {
  private readonly dir = mkdtempSync(join(tmpdir(), 'agent-commons-corpus-'));
  private readonly local: SQLite.Database;
  private generation: string | undefined;
  private syncing: Promise<void> | undefined;

  constructor(private readonly database: Database) {
    this.local = new SQLite(join(this.dir, 'corpus.db'));
    this.local.pragma('journal_mode = WAL');
    this.local.pragma('synchronous = OFF');
    for (const statement of COPY_DDL) this.local.exec(statement);
  }

  async reader(): Promise<SQLite.Database> {
    const row = await this.database.db
      .selectFrom('settings')
      .select('value')
      .where('key', '=', GENERATION_KEY)
      .executeTakeFirst();
    const generation = row?.value ?? '0';
    if (generation !== this.generation) {
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
    this.generation = generation;
  }

  close(): void {
    this.local.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
