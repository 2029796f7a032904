import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readHtml } from '../src/domain/research/html-reader.ts';

test('HTML: fallback markup of iframe, noembed and noframes stays out of the text', () => {
  const read = readHtml(
    '<body><p>Before.</p><iframe src="/x"><p>Your browser has no frames.</p></iframe>' +
      '<noembed><b>no embeds</b></noembed><noframes><p>no frames</p></noframes><p>After.</p></body>',
  );
  assert.deepEqual(
    read.sections.map((s) => s.text.replace(/\s+/g, ' ').trim()),
    ['Before. After.'],
  );
});

test('HTML: implied ends of p and li close their paragraphs; svg content stays out', () => {
  const read = readHtml(
    '<head><title>Lists</title></head><h1>Lists</h1><p>One<p>Two &amp; three<ul><li>a<li>b</ul>' +
      '<svg viewBox="0 0 1 1"><text>label</text></svg><h2>Next</h2><p>End',
  );
  assert.equal(read.title, 'Lists');
  assert.deepEqual(
    read.sections.map((s) => [
      s.heading,
      s.text
        .split(/\n\n+/)
        .map((line) => line.trim())
        .filter(Boolean),
    ]),
    [
      ['Lists', ['One', 'Two & three', 'a', 'b']],
      ['Next', ['End']],
    ],
  );
});
