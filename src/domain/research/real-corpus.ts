import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
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

/**
 * The corpus shipped in the repository, so the demo answers on any machine: RFC 6749 (OAuth 2.0,
 * which this service's grants build on), distributed unmodified and in full as the IETF Trust's
 * Legal Provisions allow (see corpus/README.md), and the project's own documentation (MIT).
 */
export const REPOSITORY_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export const SHIPPED_RFCS: CorpusFile[] = [
  {
    path: join(REPOSITORY_ROOT, 'corpus', 'rfc6749.txt'),
    metadata: {
      source: 'paper',
      authors: 'D. Hardt (editor), IETF',
      year: 2012,
      url: 'https://www.rfc-editor.org/rfc/rfc6749',
    },
  },
];

/** The guides a newcomer asks about; generated references (api-reference, configuration) are left out. */
export const SHIPPED_DOCS = [
  'README.md',
  'docs/api.md',
  'docs/decisions.md',
  'docs/deployment.md',
  'docs/pages.md',
  'docs/research.md',
  'docs/a2a.md',
  'docs/signed-requests.md',
];

function projectDoc(path: string): CorpusFile {
  return {
    path: join(REPOSITORY_ROOT, path),
    metadata: { source: 'book', authors: 'The agent-commons project' },
  };
}

/** The shipped corpus (present in every checkout), then the Debian documents this machine has. */
export function realCorpusFiles(size: 'demo' | 'full'): CorpusFile[] {
  const papers = size === 'demo' ? SQLITE_PAPERS.slice(0, DEMO_PAPER_COUNT) : SQLITE_PAPERS;
  const installed = [...papers.map(paper), BASH_MANUAL];
  const shipped = size === 'demo' ? [...SHIPPED_RFCS, ...SHIPPED_DOCS.map(projectDoc)] : [];
  return [...shipped, ...installed].filter((file) => existsSync(file.path));
}
