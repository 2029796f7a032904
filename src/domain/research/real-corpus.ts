import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { DocumentMetadata } from './corpus.ts';

/**
 * The real corpus the demo and the benchmark use: public text nobody in this project wrote, installed
 * from Debian (`.ci/run` installs both packages). Papers: the SQLite project's technical articles
 * (sqlite3-doc, public domain). Book: the GNU Bash Reference Manual (bash-doc).
 */
export const SQLITE_DOC_DIR = '/usr/share/doc/sqlite3';
export const BASH_DOC_DIR = '/usr/share/doc/bash';

/** Every technical article of the benchmark corpus; the demo seeds the first few. */
export const SQLITE_PAPERS = [
  'atomiccommit',
  'wal',
  'queryplanner',
  'howtocorrupt',
  'whentouse',
  'isolation',
  'testing',
  'fileformat2',
  'lockingv3',
  'fts5',
  'optoverview',
  'vtab',
  'asyncvfs',
  'malloc',
  'tempfiles',
  'rtree',
  'json1',
  'datatype3',
  'np1queryprob',
  'fasterthanfs',
  'arch',
  'sharedcache',
  'uri',
  'opcode',
];
export const DEMO_PAPER_COUNT = 6;

export interface CorpusFile {
  path: string;
  metadata: DocumentMetadata;
}

function paper(name: string): CorpusFile {
  return {
    path: join(SQLITE_DOC_DIR, `${name}.html`),
    metadata: { source: 'paper', authors: 'The SQLite developers', url: `https://sqlite.org/${name}.html` },
  };
}

export const BASH_MANUAL: CorpusFile = {
  path: join(BASH_DOC_DIR, 'bashref.html'),
  metadata: {
    source: 'book',
    title: 'Bash Reference Manual',
    authors: 'Chet Ramey, Brian Fox',
    year: 2022,
    url: 'https://www.gnu.org/software/bash/manual/bash.html',
  },
};

/** The corpus files present on this machine: all papers (full) or the demo's few (small). */
export function realCorpusFiles(size: 'demo' | 'full'): CorpusFile[] {
  const papers = size === 'demo' ? SQLITE_PAPERS.slice(0, DEMO_PAPER_COUNT) : SQLITE_PAPERS;
  return [...papers.map(paper), BASH_MANUAL].filter((file) => existsSync(file.path));
}
