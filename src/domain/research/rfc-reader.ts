import type { ParsedDocument, Section } from './document.ts';

/** The header block every RFC in the plain-text series opens with. */
const RFC_NUMBER = /^Request for Comments:\s+(\d+)/m;
/** A numbered section heading at the left margin: "4.1.3.  Access Token Request". */
const SECTION_HEADING = /^(?:\d+(?:\.\d+)*\.|Appendix [A-Z](?:\.\d+)*\.)\s+\S.*$/;
/** The running header and footer of each printed page, and the form feed between pages. */
const PAGE_FURNITURE = /^(?:RFC \d+\s.*\s\d{4}|.*\[Page \d+\])$/;

/** True when the text is an RFC as the RFC Editor publishes it in plain text. */
export function looksLikeRfc(text: string): boolean {
  return RFC_NUMBER.test(text.slice(0, 2000));
}

/**
 * An RFC in plain text: its numbered sections become sections (so a passage says "6. Refreshing an
 * Access Token"), page headers, footers and form feeds are dropped, and the title is the centred
 * line after the header block. The table of contents is skipped: its lines look like headings.
 */
export function readRfc(text: string): ParsedDocument {
  const lines = text.replace(/\r\n?/g, '\n').replace(/\f/g, '').split('\n');
  const number = RFC_NUMBER.exec(text)?.[1];
  const headerEnd = lines.findIndex((line, index) => index > 0 && RFC_NUMBER.test(line));
  const titleLine = lines.slice(headerEnd + 1).find((line) => /^\s{4,}\S/.test(line) && !line.includes(':'));
  const title = titleLine ? `RFC ${number}: ${titleLine.trim()}` : `RFC ${number}`;
  const sections: Section[] = [];
  let current: Section = { heading: '', text: '' };
  let inContents = false;
  for (const line of lines) {
    if (PAGE_FURNITURE.test(line.trim()) && !/^\s/.test(line)) continue;
    if (/^Table of Contents\s*$/.test(line)) {
      inContents = true;
      continue;
    }
    if (SECTION_HEADING.test(line) && !/\.{4,}\s*\d+\s*$/.test(line)) {
      inContents = false;
      if (current.text.trim()) sections.push(current);
      current = { heading: line.trim().replace(/\s+/g, ' '), text: '' };
      continue;
    }
    if (inContents) continue;
    current.text += `${line}\n`;
  }
  if (current.text.trim()) sections.push(current);
  return { title, authors: undefined, year: undefined, sections };
}
