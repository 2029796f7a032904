/**
 * The embedded engine's passage table and its FTS5 index (external content: the text is stored once),
 * kept in step by triggers. Used by migration 0007 and by the per-instance index of PostgreSQL
 * deployments, so both rank with the same BM25.
 */
export const SQLITE_CORPUS_DDL = [
  'create table corpus_passages (id integer primary key, document_id text not null, position integer not null, source text not null, title text not null, section text not null, body text not null)',
  // title, section and body are ranked; source is matched only as a filter (weight 0 in the ranking).
  "create virtual table corpus_fts using fts5(title, section, body, source, content = 'corpus_passages', content_rowid = 'id', tokenize = 'porter unicode61 remove_diacritics 2')",
  'create trigger corpus_passages_ai after insert on corpus_passages begin insert into corpus_fts (rowid, title, section, body, source) values (new.id, new.title, new.section, new.body, new.source); end',
  "create trigger corpus_passages_ad after delete on corpus_passages begin insert into corpus_fts (corpus_fts, rowid, title, section, body, source) values ('delete', old.id, old.title, old.section, old.body, old.source); end",
];
