/**
 * The content folder's one file format: a front matter block of `key: value` lines between `---`
 * lines, then Markdown. Sections start at level-2 headings (`## Title`, optionally `## Title {#id}`);
 * headings inside fenced code blocks do not count. Deliberately not YAML: operators write flat keys.
 */

export class ContentError extends Error {}

export interface MarkdownFile {
  fields: Record<string, string>;
  /** Everything before the first section. */
  intro: string;
  sections: Section[];
}

export interface Section {
  id: string;
  heading: string;
  body: string;
}

const FENCE = /^\s{0,3}(```|~~~)/;
const SECTION = /^##\s+(.+?)\s*$/;
const EXPLICIT_ID = /^(.*?)\s*\{#([a-z0-9][a-z0-9-]*)\}$/;

export function slugify(text: string): string {
  return (
    text
      .normalize('NFKD')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}]+/gu, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 80) || 'section'
  );
}

function parseFields(lines: string[], name: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of lines) {
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
    const match = /^([A-Za-z_][\w-]*)\s*:\s*(.*)$/.exec(line);
    if (!match) throw new ContentError(`${name}: front matter line is not "key: value": ${line}`);
    const value = match[2].trim();
    const quoted = /^(["'])(.*)\1$/.exec(value);
    fields[match[1].toLowerCase()] = quoted ? quoted[2] : value;
  }
  return fields;
}

export function parseMarkdownFile(text: string, name: string): MarkdownFile & { body: string } {
  const lines = text
    .replace(/^\uFEFF/, '')
    .replace(/\r\n?/g, '\n')
    .split('\n');
  if (lines[0]?.trim() !== '---')
    throw new ContentError(`${name}: must start with a front matter block (---)`);
  const end = lines.findIndex((line, index) => index > 0 && line.trim() === '---');
  if (end < 0) throw new ContentError(`${name}: the front matter block is not closed (---)`);
  const body = lines
    .slice(end + 1)
    .join('\n')
    .trim();
  return { fields: parseFields(lines.slice(1, end), name), body, ...parseSections(body, name) };
}

/** Splits Markdown into the text before the first `## ` heading and the sections it starts. */
export function parseSections(markdown: string, name: string): Pick<MarkdownFile, 'intro' | 'sections'> {
  const intro: string[] = [];
  const sections: { heading: string; id: string; lines: string[] }[] = [];
  const used = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (FENCE.test(line)) fenced = !fenced;
    const heading = fenced ? null : SECTION.exec(line);
    if (!heading) {
      (sections.at(-1)?.lines ?? intro).push(line);
      continue;
    }
    const explicit = EXPLICIT_ID.exec(heading[1]);
    const title = explicit ? explicit[1] : heading[1];
    let id = explicit ? explicit[2] : slugify(title);
    if (explicit && used.has(id)) throw new ContentError(`${name}: two sections have the id ${id}`);
    for (let n = 2; used.has(id); n += 1) id = `${slugify(title)}-${n}`;
    used.add(id);
    sections.push({ heading: title, id, lines: [] });
  }
  return {
    intro: intro.join('\n').trim(),
    sections: sections.map((s) => ({ id: s.id, heading: s.heading, body: s.lines.join('\n').trim() })),
  };
}

/** Checks for the field values the import stores. */
export const check = {
  required(fields: Record<string, string>, key: string, name: string): string {
    const value = fields[key];
    if (!value) throw new ContentError(`${name}: front matter needs "${key}"`);
    return value;
  },
  date(value: string, name: string): string {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`)))
      throw new ContentError(`${name}: date must be YYYY-MM-DD, got "${value}"`);
    return value;
  },
  /** Only http(s) links are published: agents and feed readers follow them. */
  url(value: string | undefined, name: string): string | null {
    if (!value) return null;
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new ContentError(`${name}: not a URL: ${value}`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      throw new ContentError(`${name}: only http(s) links are accepted: ${value}`);
    return url.href;
  },
};
