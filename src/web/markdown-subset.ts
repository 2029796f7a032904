import { escapeHtml, SafeHtml } from './html.ts';

/**
 * The little Markdown the operation registry's prose uses, as HTML: `code`, [links](url), **strong**,
 * *emphasis* (or _emphasis_ between word boundaries, so snake_case names stay as written), and in
 * blocks, paragraphs and `- ` lists. Everything else is text: every character that is not this
 * markup is escaped, so a description cannot put HTML on a page. Synchronous and small, because
 * the reference page is built as the app starts (markdown-it, for the newsletter, loads lazily).
 */

/** A link target kept as a link: http(s), a path on this site, or an anchor on the page. */
function safeHref(url: string): string | undefined {
  // No quote, angle bracket or backslash in a target at all: it is a typo, not an address.
  if (/["'<>\\]/.test(url)) return undefined;
  if (/^https?:\/\/\S+$/i.test(url)) return url;
  if (/^\/(?!\/)\S*$/.test(url) || /^#\S+$/.test(url)) return url;
  return undefined;
}

/** Emphasis and links inside text that holds no code span. */
function renderSpans(text: string): string {
  let out = '';
  let rest = text;
  const pattern =
    /\[([^\]\n]+)\]\(([^)\s]+)\)|\*\*(?=\S)([^*\n]+?)\*\*|\*(?=[^\s*])([^*\n]+?)\*|(?<![\p{L}\p{N}_])_(?=[^\s_])([^_\n]+?)_(?![\p{L}\p{N}_])/u;
  for (;;) {
    const match = pattern.exec(rest);
    if (!match) return out + escapeHtml(rest);
    out += escapeHtml(rest.slice(0, match.index));
    const [whole, label, url, strong, em, underscored] = match;
    if (label !== undefined) {
      const href = safeHref(url);
      out += href ? `<a href="${escapeHtml(href)}">${renderSpans(label)}</a>` : escapeHtml(whole);
    } else if (strong !== undefined) out += `<strong>${renderSpans(strong)}</strong>`;
    else out += `<em>${renderSpans(em ?? underscored)}</em>`;
    rest = rest.slice(match.index + whole.length);
  }
}

/** One line or paragraph of inline Markdown as HTML (code spans first: nothing inside them is markup). */
export function renderInline(text: string): SafeHtml {
  let out = '';
  let rest = text;
  for (;;) {
    const match = /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/.exec(rest);
    if (!match) break;
    out += renderSpans(rest.slice(0, match.index));
    out += `<code>${escapeHtml(match[2])}</code>`;
    rest = rest.slice(match.index + match[0].length);
  }
  return new SafeHtml(out + renderSpans(rest));
}

/** Paragraphs (split at blank lines) and `- ` / `* ` lists, each item inline Markdown. */
export function renderMarkdownSubset(source: string): SafeHtml {
  const blocks = source
    .replace(/\r\n?/g, '\n')
    .split(/\n\s*\n/)
    .map((block) => block.trim())
    .filter(Boolean);
  const html = blocks.map((block) => {
    const lines = block.split('\n').map((line) => line.trim());
    // A list may follow its lead-in line directly, without a blank line between.
    const first = lines.findIndex((line) => /^[-*] /.test(line));
    const listed = first !== -1 && lines.slice(first).every((line) => /^[-*] /.test(line));
    const prose = listed ? lines.slice(0, first) : lines;
    const items = listed ? lines.slice(first) : [];
    return [
      prose.length ? `<p>${renderInline(prose.join(' ')).value}</p>` : '',
      items.length
        ? `<ul>${items.map((line) => `<li>${renderInline(line.slice(2)).value}</li>`).join('')}</ul>`
        : '',
    ].join('');
  });
  return new SafeHtml(html.join('\n'));
}
