import type { ParsedDocument, Section } from './document.ts';

/** Plain text: one untitled section; a short first line stands as the title. */
export function readPlainText(text: string): ParsedDocument {
  const normalized = text.replace(/\r\n?/g, '\n');
  const firstLine = normalized.trimStart().split('\n', 1)[0]?.trim() ?? '';
  const title = firstLine.length > 0 && firstLine.length <= 120 ? firstLine : undefined;
  return { title, sections: [{ heading: '', text: normalized }] };
}

/** Inline Markdown reduced to its words: links keep their text, emphasis and code marks go. */
function inlineText(line: string): string {
  return line
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[*_`]{1,3}([^*_`]+)[*_`]{1,3}/g, '$1')
    .replace(/^\s{0,3}(>|[-*+]|\d+\.)\s+/, '');
}

/** Markdown: ATX headings start sections; the first level-one heading is the title. */
export function readMarkdown(text: string): ParsedDocument {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  let start = 0;
  let frontTitle: string | undefined;
  let frontAuthors: string | undefined;
  if (lines[0]?.trim() === '---') {
    const end = lines.indexOf('---', 1);
    if (end > 0) {
      for (const line of lines.slice(1, end)) {
        const [key, ...rest] = line.split(':');
        const value = rest
          .join(':')
          .trim()
          .replace(/^["']|["']$/g, '');
        if (key.trim() === 'title') frontTitle = value;
        if (key.trim() === 'author' || key.trim() === 'authors') frontAuthors = value;
      }
      start = end + 1;
    }
  }
  const sections: Section[] = [];
  let current: Section = { heading: '', text: '' };
  let title = frontTitle;
  let fenced = false;
  for (const line of lines.slice(start)) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      if (current.text.trim()) sections.push(current);
      const headingText = inlineText(heading[2]);
      if (!title && heading[1].length === 1) title = headingText;
      current = { heading: headingText, text: '' };
    } else {
      current.text += `${fenced ? line : inlineText(line)}\n`;
    }
  }
  if (current.text.trim()) sections.push(current);
  return { title, authors: frontAuthors, sections };
}
