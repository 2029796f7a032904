import { Parser } from 'htmlparser2';
import { type ParsedDocument, type Section, yearIn } from './document.ts';

/**
 * Elements whose text is never part of the document's content. iframe, noembed and noframes hold
 * fallback markup that a browser never shows; the parser reads it as raw text (WHATWG), so without
 * skipping it its tags would land in a passage as literal `<p>`.
 */
const SKIPPED = new Set([
  'script',
  'iframe',
  'noembed',
  'noframes',
  'style',
  'noscript',
  'nav',
  'header',
  'footer',
  'svg',
  'template',
  'head',
]);
/** Elements that end a paragraph. */
const BLOCKS = new Set([
  'p',
  'div',
  'li',
  'pre',
  'tr',
  'br',
  'table',
  'ul',
  'ol',
  'dl',
  'dt',
  'dd',
  'blockquote',
  'section',
  'article',
  'hr',
]);
const HEADINGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6']);
/** Site chrome marked by class (menus, search boxes, "on this page" lists) stays out of passages. */
const CHROME_CLASS = /\b(nosearch|menu|navbar|sidebar|toc|breadcrumb)\b/i;

/**
 * HTML: headings start sections, block elements end paragraphs, navigation and scripts are dropped.
 * Title, authors and year come from <title>, the first h1 and the usual meta tags.
 */
export function readHtml(html: string): ParsedDocument {
  const sections: Section[] = [];
  let current: Section = { heading: '', text: '' };
  let heading: string | null = null;
  let skipDepth = 0;
  const stack: boolean[] = [];
  let titleText = '';
  let inTitle = false;
  let firstH1: string | undefined;
  const meta: Record<string, string> = {};

  const parser = new Parser(
    {
      onopentag(name, attributes) {
        const skipped = SKIPPED.has(name) || CHROME_CLASS.test(attributes.class ?? '');
        stack.push(skipped);
        if (skipped) skipDepth++;
        if (name === 'title') inTitle = true;
        if (name === 'meta' && attributes.content) {
          const key = (attributes.name ?? attributes.property ?? '').toLowerCase();
          if (key) meta[key] = attributes.content;
        }
        if (skipDepth > 0) return;
        if (HEADINGS.has(name)) heading = '';
        else if (BLOCKS.has(name)) current.text += '\n\n';
      },
      ontext(text) {
        if (inTitle) titleText += text;
        if (skipDepth > 0) return;
        if (heading !== null) heading += text;
        else current.text += text;
      },
      onclosetag(name) {
        if (name === 'title') inTitle = false;
        if (stack.pop()) skipDepth--;
        if (skipDepth > 0) return;
        if (HEADINGS.has(name) && heading !== null) {
          const text = heading.replace(/\s+/g, ' ').trim();
          heading = null;
          if (name === 'h1' && !firstH1) firstH1 = text;
          if (current.text.trim()) sections.push(current);
          current = { heading: text, text: '' };
        } else if (BLOCKS.has(name)) current.text += '\n\n';
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.write(html);
  parser.end();
  if (current.text.trim()) sections.push(current);
  const title = titleText.replace(/\s+/g, ' ').trim() || firstH1;
  const authors = meta.citation_author ?? meta.author ?? meta['dc.creator'];
  const year = yearIn(meta.citation_publication_date ?? meta['dc.date'] ?? meta.date);
  return { title: title || undefined, authors, year, sections };
}
