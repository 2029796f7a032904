import type SQLite from 'better-sqlite3';

/**
 * The embedded engine's passage table, also the table of the local copy each instance keeps on
 * PostgreSQL deployments. Retrieval ranks from an in-memory index built from it
 * (domain/research/passage-index.ts), so no full-text index is kept on disk.
 */
export const SQLITE_PASSAGES_TABLE =
  'create table corpus_passages (id integer primary key autoincrement, document_id text not null, position integer not null, source text not null, title text not null, section text not null, body text not null)';

/** A passage with its document's attribution, as a research answer cites it. */
export interface PassageDetails {
  document_id: string;
  position: number;
  title: string;
  section: string;
  source: string;
  body: string;
  authors: string;
  year: number | null;
  url: string | null;
}

/** A passage's ranked fields, as the index reads them: id, source, title, section, body. */
export type IndexedPassage = [number, string, string, string, string];

const detailStatements = new WeakMap<SQLite.Database, SQLite.Statement>();
const sliceStatements = new WeakMap<SQLite.Database, SQLite.Statement>();

/** The statement kept per connection: a search prepares nothing. */
function kept(statements: WeakMap<SQLite.Database, SQLite.Statement>, db: SQLite.Database, sql: string) {
  let statement = statements.get(db);
  if (!statement) {
    statement = db.prepare(sql);
    statements.set(db, statement);
  }
  return statement;
}

export const corpusPassages = {
  /** One passage and its document's attribution, by passage id. */
  details(db: SQLite.Database, passageId: number): PassageDetails | undefined {
    return kept(
      detailStatements,
      db,
      'select p.document_id, p.position, p.title, p.section, p.source, p.body, d.authors, d.year, d.url from corpus_passages p join corpus_documents d on d.id = p.document_id where p.id = ?',
    ).get(passageId) as PassageDetails | undefined;
  },

  /** Up to `limit` passages after passage id `after`, in id order: the index is built slice by slice. */
  slice(db: SQLite.Database, after: number, limit: number): IndexedPassage[] {
    const statement = kept(
      sliceStatements,
      db,
      'select id, source, title, section, body from corpus_passages where id > ? order by id limit ?',
    );
    return statement.raw().all(after, limit) as IndexedPassage[];
  },
};
