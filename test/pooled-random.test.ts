// The pooled random hex behind activity ids (src/secrets.ts): right length, never the same bytes
// twice across the pool's refills, and every hex digit in use.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pooledRandomHex } from '../src/secrets.ts';

test('pooled random hex: 5 000 five-byte values over several refills are well formed and distinct', () => {
  const values = Array.from({ length: 5000 }, () => pooledRandomHex(5));
  assert.ok(values.every((value) => /^[0-9a-f]{10}$/.test(value)));
  assert.equal(new Set(values).size, values.length);
  const digits = new Set(values.join(''));
  assert.equal(digits.size, 16);
  // Odd sizes too, straddling the end of a pool.
  const odd = Array.from({ length: 500 }, (_, i) => pooledRandomHex(1 + (i % 13)));
  assert.ok(odd.every((value, i) => value.length === 2 * (1 + (i % 13))));
  // More than a whole pool at once is drawn directly, whole.
  assert.match(pooledRandomHex(5000), /^[0-9a-f]{10000}$/);
});
