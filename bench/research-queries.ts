// The labelled relevance set, written before any tuning: each query names the document that answers it
// (its sqlite.org page, or the Bash manual) and, where one is clearly right, a pattern for the section.
export interface LabelledQuery {
  q: string;
  sources: ('paper' | 'book')[];
  /** File name of the SQLite article, or `bash` for the manual. */
  doc: string;
  section?: RegExp;
}

const paper = (q: string, doc: string, section?: RegExp): LabelledQuery => ({
  q,
  sources: ['paper'],
  doc,
  section,
});
const book = (q: string, section: RegExp): LabelledQuery => ({ q, sources: ['book'], doc: 'bash', section });

export const LABELLED_QUERIES: LabelledQuery[] = [
  paper('how does a checkpoint move WAL content back into the database', 'wal', /checkpoint/i),
  paper('what is a hot journal and how is it rolled back', 'atomiccommit', /hot/i),
  paper('why does WAL not work over a network filesystem', 'wal'),
  paper('super-journal for a commit across multiple database files', 'atomiccommit', /multi-file|super/i),
  paper('how the query planner uses an index instead of a full table scan', 'queryplanner'),
  paper('covering index avoids looking up the table row', 'queryplanner', /covering/i),
  paper('corrupting a database by deleting the journal file', 'howtocorrupt'),
  paper('fsync that does not really flush data to disk', 'howtocorrupt', /sync|flush/i),
  paper('when a client/server database works better than SQLite', 'whentouse', /client\/server/i),
  paper('SQLite as an application file format', 'whentouse'),
  paper('isolation between database connections and snapshots', 'isolation'),
  paper('branch test coverage MC/DC', 'testing', /coverage/i),
  paper('fuzz testing of SQL statements', 'testing', /fuzz/i),
  paper('database header page size field', 'fileformat2', /header/i),
  paper('b-tree interior and leaf page cell format', 'fileformat2', /b-tree/i),
  paper('SHARED RESERVED PENDING EXCLUSIVE lock states', 'lockingv3', /lock/i),
  paper('writer starvation and the pending lock', 'lockingv3', /starvation/i),
  paper('full-text query syntax for phrases and NEAR groups', 'fts5', /query syntax|near|phrase/i),
  paper('bm25 ranking function for full-text results', 'fts5', /bm25|rank|auxiliary/i),
  paper('memory allocator without malloc memsys5', 'malloc'),
  paper('temporary files used for statement journals', 'tempfiles'),
  paper('r-tree spatial index bounding box query', 'rtree'),
  paper('json_extract path arguments', 'json1'),
  paper('type affinity of a column', 'datatype3', /affinity/i),
  paper('are many small queries efficient', 'np1queryprob'),
  paper('reading blobs faster than from the filesystem', 'fasterthanfs'),
  paper('virtual table xBestIndex method', 'vtab', /xbestindex/i),
  book('parameter expansion default value when unset', /parameter expansion/i),
  book('here documents redirection', /redirection|here documents/i),
  book('brace expansion', /brace expansion/i),
  book('readline key bindings in the inputrc file', /readline init file|inputrc|key bindings/i),
  book('job control suspend a job to the background', /job control/i),
];
