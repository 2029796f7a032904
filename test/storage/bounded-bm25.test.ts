// BM25 over candidate rows: the embedded engine's ranking for a word too many rows hold.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rankCandidates } from '../../src/storage/engine/bounded-bm25.ts';

test('more hits in a shorter text rank first; ties go by id', () => {
  const ranked = rankCandidates(
    [
      { id: 'c', columns: ['Cy', 'maker of lamps and many other things besides'] },
      { id: 'a', columns: ['Al', 'maker, maker'] },
      { id: 'b', columns: ['Bo', 'maker of lamps and many other things besides'] },
    ],
    ['maker'],
    false,
  );
  assert.deepEqual(ranked, ['a', 'b', 'c']);
});

test('words fold as the index folds them: case and diacritics off, prefixes when asked', () => {
  const candidates = [
    { id: 'zoe', columns: ['Zoë Brontë', 'Études of clocks'] },
    { id: 'ed', columns: ['Ed', 'clockmaker'] },
  ];
  assert.deepEqual(rankCandidates(candidates, ['zoe', 'etudes'], false)[0], 'zoe');
  assert.deepEqual(rankCandidates(candidates, ['CLOCKS'], false), ['zoe', 'ed']);
  assert.deepEqual(rankCandidates(candidates, ['clock'], true)[0], 'ed');
});
