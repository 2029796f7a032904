import type { Section } from './document.ts';

/** Passages aim for this many characters and never pass the maximum (a sentence may be cut there). */
export const PASSAGE_TARGET = 700;
export const PASSAGE_MAX = 1200;

export interface Passage {
  position: number;
  section: string;
  body: string;
}

function paragraphs(text: string): string[] {
  return text
    .split(/\n\s*\n/)
    .map((p) => p.replace(/\s+/g, ' ').trim())
    .filter((p) => p.length > 0);
}

/** A paragraph longer than the maximum, cut at sentence ends (or spaces) into pieces below it. */
function pieces(paragraph: string): string[] {
  if (paragraph.length <= PASSAGE_MAX) return [paragraph];
  const out: string[] = [];
  let rest = paragraph;
  while (rest.length > PASSAGE_MAX) {
    const window = rest.slice(0, PASSAGE_MAX);
    let cut = Math.max(window.lastIndexOf('. '), window.lastIndexOf('? '), window.lastIndexOf('! '));
    if (cut < PASSAGE_TARGET / 2) cut = window.lastIndexOf(' ');
    if (cut <= 0) cut = PASSAGE_MAX - 1;
    out.push(rest.slice(0, cut + 1).trim());
    rest = rest.slice(cut + 1).trim();
  }
  if (rest) out.push(rest);
  return out;
}

/**
 * Splits sections into passages of whole paragraphs where possible; a passage never spans two
 * sections, so each keeps its heading. Positions count from 0 across the document.
 */
export function splitIntoPassages(sections: Section[]): Passage[] {
  const passages: Passage[] = [];
  for (const section of sections) {
    let body = '';
    const flush = () => {
      if (body) passages.push({ position: passages.length, section: section.heading, body });
      body = '';
    };
    for (const paragraph of paragraphs(section.text).flatMap(pieces)) {
      if (body && body.length + paragraph.length + 1 > PASSAGE_MAX) flush();
      body = body ? `${body}\n${paragraph}` : paragraph;
      if (body.length >= PASSAGE_TARGET) flush();
    }
    flush();
  }
  return passages;
}
