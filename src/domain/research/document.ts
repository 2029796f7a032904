/** What every reader (text, Markdown, HTML, PDF) turns a file into before it is split into passages. */
export interface ParsedDocument {
  title?: string;
  authors?: string;
  year?: number;
  sections: Section[];
}

/** A heading and its text; paragraphs are separated by blank lines. */
export interface Section {
  heading: string;
  text: string;
}

export const FORMATS = ['text', 'markdown', 'html', 'pdf'] as const;
export type Format = (typeof FORMATS)[number];

export const SOURCES = ['paper', 'book'] as const;
export type Source = (typeof SOURCES)[number];

export function isSource(value: string): value is Source {
  return (SOURCES as readonly string[]).includes(value);
}

/** The format named by a file extension or, for a URL, by the response's content type. */
export function formatOf(name: string, contentType?: string): Format {
  const type = contentType?.split(';')[0].trim().toLowerCase();
  if (type === 'application/pdf') return 'pdf';
  if (type === 'text/html' || type === 'application/xhtml+xml') return 'html';
  if (type === 'text/markdown') return 'markdown';
  const extension = /\.([a-z0-9]+)$/i.exec(new URL(name, 'file:///').pathname)?.[1]?.toLowerCase();
  if (extension === 'pdf') return 'pdf';
  if (extension === 'html' || extension === 'htm' || extension === 'xhtml') return 'html';
  if (extension === 'md' || extension === 'markdown') return 'markdown';
  return 'text';
}

/** A four-digit year between 1000 and 2999 found in the text, if any. */
export function yearIn(text: string | undefined): number | undefined {
  const match = text ? /\b(1\d{3}|2\d{3})\b/.exec(text) : null;
  return match ? Number(match[1]) : undefined;
}
