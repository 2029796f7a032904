// The app answers the recorded corpus (test/fixtures/wire-corpus.json) as it was recorded: the same
// status, headers and body for each request, after normalising what is fresh on every run
// (test/support/wire-corpus.ts). A change of the wire that is meant is recorded again with
// scripts/record-wire-corpus.ts, and shows in the fixture's diff.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { CASES, CORPUS_FILE, type Recorded, recordCorpus } from './support/wire-corpus.ts';

test('every request of the corpus is answered as recorded', async () => {
  const recorded = JSON.parse(readFileSync(CORPUS_FILE, 'utf8')) as Recorded[];
  assert.deepEqual(
    recorded.map((record) => record.name),
    CASES.map((item) => item.name),
    'the recording holds the corpus as it is listed',
  );
  const replayed = await recordCorpus();
  for (const [index, record] of recorded.entries())
    assert.deepEqual(replayed[index], record, `${record.method} ${record.path} (${record.name})`);
});
