import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { OPERATIONS } from '../src/operations/registry.ts';
import { renderInline, renderMarkdownSubset } from '../src/web/markdown-subset.ts';

const inline = (text: string) => renderInline(text).value;
const block = (text: string) => renderMarkdownSubset(text).value;

describe('the Markdown subset of the registry prose', () => {
  test('code spans, with everything inside them literal', () => {
    assert.equal(inline('Poll every `interval` seconds'), 'Poll every <code>interval</code> seconds');
    assert.equal(inline('`**not bold**` and `<b>`'), '<code>**not bold**</code> and <code>&lt;b&gt;</code>');
    assert.equal(inline('``a ` b``'), '<code>a ` b</code>');
    assert.equal(inline('an `unclosed span'), 'an `unclosed span');
  });

  test('links: http(s), site paths and anchors; any other target stays text', () => {
    assert.equal(inline('[OpenAPI](/openapi.json)'), '<a href="/openapi.json">OpenAPI</a>');
    assert.equal(
      inline('see [the RFC](https://www.rfc-editor.org/rfc/rfc9421?x=1&y=2)'),
      'see <a href="https://www.rfc-editor.org/rfc/rfc9421?x=1&amp;y=2">the RFC</a>',
    );
    assert.equal(inline('[up](#errors)'), '<a href="#errors">up</a>');
    assert.equal(inline('[x](javascript:alert(1))'), '[x](javascript:alert(1))');
    assert.equal(inline('[x](//evil.example/)'), '[x](//evil.example/)');
    assert.equal(inline('[x](data:text/html,hi)'), '[x](data:text/html,hi)');
    assert.equal(inline('[x](/a"b)'), '[x](/a&quot;b)');
    assert.equal(inline('cites them as [n] (the n-th result)'), 'cites them as [n] (the n-th result)');
    assert.equal(inline('[**bold** link](/a)'), '<a href="/a"><strong>bold</strong> link</a>');
  });

  test('emphasis and strong; snake_case names and lone stars are text', () => {
    assert.equal(
      inline('**must** and *may* and _might_'),
      '<strong>must</strong> and <em>may</em> and <em>might</em>',
    );
    assert.equal(inline('signing_key_registered, tier_requested'), 'signing_key_registered, tier_requested');
    assert.equal(inline('2 * 3 * 4'), '2 * 3 * 4');
    assert.equal(inline('admin:* scopes'), 'admin:* scopes');
  });

  test('paragraphs and lists', () => {
    assert.equal(block('One\nline.\n\nTwo.'), '<p>One line.</p>\n<p>Two.</p>');
    assert.equal(block('- a `x`\n- b'), '<ul><li>a <code>x</code></li><li>b</li></ul>');
    assert.equal(block('Either:\n- a\n- b'), '<p>Either:</p><ul><li>a</li><li>b</li></ul>');
    assert.equal(block(''), '');
  });

  test('no HTML gets through: markup, attributes and entities are escaped wherever they are', () => {
    const hostile = [
      '<script>alert(1)</script>',
      '<img src=x onerror=alert(1)>',
      '" onmouseover="alert(1)',
      "' onfocus='alert(1)",
      '&lt;already&gt; & more',
      '[<b>x</b>](https://example.org/"><script>)',
      '[x](https://example.org/" onclick="alert(1))',
      '**<i>bold</i>**',
      '*<svg onload=alert(1)>*',
      '`</code><script>alert(1)</script>`',
      '- <iframe src=//x>',
    ];
    for (const text of hostile) {
      for (const rendered of [inline(text), block(text)]) {
        const tags = [...rendered.matchAll(/<\/?([a-z]+)[^>]*>/g)].map((match) => match[0]);
        for (const tag of tags)
          assert.match(
            tag,
            /^(<(code|a href="[^"<>]*"|strong|em|p|ul|li)>|<\/(code|a|strong|em|p|ul|li)>)$/,
            `${text} → ${rendered}`,
          );
        assert.doesNotMatch(rendered, /<(script|img|svg|iframe|i|b)\b/, text);
      }
    }
    assert.equal(inline('<b>&amp;"\''), '&lt;b&gt;&amp;amp;&quot;&#39;');
  });

  test('every description in the registry renders with no backtick left over', () => {
    for (const op of OPERATIONS) {
      const rendered = block(op.description ?? '');
      assert.doesNotMatch(rendered.replace(/<code>[^<]*<\/code>/g, ''), /`/, op.id);
      for (const error of op.errors)
        assert.doesNotMatch(inline(error.description).replace(/<code>[^<]*<\/code>/g, ''), /`/, op.id);
    }
  });
});
