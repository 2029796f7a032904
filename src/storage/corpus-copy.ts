import SQLite from 'better-sqlite3';
import { GENERATION_KEY } from './corpus.ts';
import { SQLITE_PASSAGES_TABLE } from './corpus-passages.ts';
import type { CorpusDocumentsTable, CorpusPassagesTable } from './schema.ts';

// The research corpus as SQLite holds it for the in-memory index, through better-sqlite3 directly
// (the index is built and searched synchronously): the embedded engine's own tables, and the local
// copy of the documents' passages each PostgreSQL instance keeps, brought up to date document by
// document (domain/research/corpus-index.ts).

const COPY_DDL = [
  SQLITE_PASSAGES_TABLE.replace(/^create table /i, 'create table if not exists '),
  'create table if not exists corpus_documents (id text primary key, source text not null, title text not null, authors text not null, year integer, url text, revision integer not null)',
];

/** What a copied document keeps of its row. */
export type CopiedDocument = Pick<
  CorpusDocumentsTable,
  'id' | 'source' | 'title' | 'authors' | 'year' | 'url' | 'revision'
>;

/** A passage as read from the corpus (its id is the one it has there). */
export type CopiedPassage = Omit<CorpusPassagesTable, 'id'> & { id: number | string };

interface CopyStatements {
  dropPassages: SQLite.Statement;
  dropDocument: SQLite.Statement;
  addDocument: SQLite.Statement;
  addPassage: SQLite.Statement;
}

// Statements prepared once per handle, at their first use (the settings table of an embedded
// database exists only once the migrations have run).
const generationReads = new WeakMap<SQLite.Database, SQLite.Statement>();
const copyStatements = new WeakMap<SQLite.Database, CopyStatements>();

function statementsOf(local: SQLite.Database): CopyStatements {
  let statements = copyStatements.get(local);
  if (!statements) {
    statements = {
      dropPassages: local.prepare('delete from corpus_passages where document_id = ?'),
      dropDocument: local.prepare('delete from corpus_documents where id = ?'),
      addDocument: local.prepare(
        'insert into corpus_documents (id, source, title, authors, year, url, revision) values (?, ?, ?, ?, ?, ?, ?)',
      ),
      addPassage: local.prepare(
        'insert into corpus_passages (id, document_id, position, source, title, section, body) values (?, ?, ?, ?, ?, ?, ?)',
      ),
    };
    copyStatements.set(local, statements);
  }
  return statements;
}

export const corpusCopy = {
  /**
   * Opens (or makes) a local copy at `file`, with its tables. A `durable` copy must open again
   * after a crash; a temporary one dies with its process, so it need not survive one.
   */
  open(file: string, durable: boolean): SQLite.Database {
    const local = new SQLite(file);
    local.pragma('journal_mode = WAL');
    local.pragma(durable ? 'synchronous = NORMAL' : 'synchronous = OFF');
    for (const statement of COPY_DDL) local.exec(statement);
    return local;
  },

  /** The passage table's count and highest id (0 when empty), on the embedded database or a copy. */
  stamp(sqlite: SQLite.Database): { passages: number; maxPassageId: number } {
    const [passages, maxPassageId] = sqlite
      .prepare('select count(*), coalesce(max(id), 0) from corpus_passages')
      .raw()
      .get() as [number, number];
    return { passages: Number(passages), maxPassageId: Number(maxPassageId) };
  },

  /** The embedded database's corpus generation, '0' before the first change. */
  generation(sqlite: SQLite.Database): string {
    let read = generationReads.get(sqlite);
    if (!read) {
      read = sqlite.prepare('select value from settings where key = ?').pluck();
      generationReads.set(sqlite, read);
    }
    return String(read.get(GENERATION_KEY) ?? '0');
  },

  /** Each copied document's revision, by id. */
  revisions(local: SQLite.Database): Map<string, number> {
    const rows = local.prepare('select id, revision from corpus_documents').all() as {
      id: string;
      revision: number;
    }[];
    return new Map(rows.map((row) => [row.id, row.revision]));
  },

  /** Removes these documents and their passages from the copy, in one transaction. */
  dropDocuments(local: SQLite.Database, ids: Iterable<string>): void {
    const { dropPassages, dropDocument } = statementsOf(local);
    local.transaction(() => {
      for (const id of ids) {
        dropPassages.run(id);
        dropDocument.run(id);
      }
    })();
  },

  /** Writes a document and its passages over what the copy held of it, in one transaction. */
  replaceDocument(local: SQLite.Database, doc: CopiedDocument, passages: readonly CopiedPassage[]): void {
    const { dropPassages, dropDocument, addDocument, addPassage } = statementsOf(local);
    local.transaction(() => {
      dropPassages.run(doc.id);
      dropDocument.run(doc.id);
      addDocument.run(doc.id, doc.source, doc.title, doc.authors, doc.year, doc.url, Number(doc.revision));
      for (const p of passages)
        addPassage.run(Number(p.id), p.document_id, p.position, p.source, p.title, p.section, p.body);
    })();
  },
};
