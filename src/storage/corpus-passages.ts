/**
 * The embedded engine's passage table, also the table of the local copy each instance keeps on
 * PostgreSQL deployments. Retrieval ranks from an in-memory index built from it
 * (domain/research/passage-index.ts), so no full-text index is kept on disk.
 */
export const SQLITE_PASSAGES_TABLE =
  'create table corpus_passages (id integer primary key autoincrement, document_id text not null, position integer not null, source text not null, title text not null, section text not null, body text not null)';
