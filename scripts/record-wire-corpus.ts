// Records the wire corpus again (test/fixtures/wire-corpus.json; see test/support/wire-corpus.ts).
// Only when a change of the wire is meant: the recording is what test/wire-corpus.test.ts holds the
// app to. Usage: node scripts/record-wire-corpus.ts
import { writeFileSync } from 'node:fs';
import { CORPUS_FILE, recordCorpus } from '../test/support/wire-corpus.ts';

const records = await recordCorpus();
writeFileSync(CORPUS_FILE, `${JSON.stringify(records, null, 2)}\n`);
console.log(`${records.length} exchanges recorded in ${CORPUS_FILE.pathname}`);
