import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { TIER_HEADING } from './library.ts';
import { ContentError, check, parseMarkdownFile } from './markdown-file.ts';

/**
 * The content folder, read and checked before anything is stored:
 *   newsletter/<slug>.md       an issue (title, date, summary?); each `## ` section is a story
 *   presentations/<number>.md  a talk (title, date, speaker?, summary?, slides?, video?); body = notes
 *   news/<id>.md               a link (title, url, date); body = a short note
 *   donate.md                  the donation page (title, url?); intro = how to give; sections = tiers
 * A kind whose folder (or file) is absent is left alone by the import.
 */
export interface ContentSet {
  issues?: IssueDoc[];
  presentations?: PresentationDoc[];
  news?: NewsDoc[];
  pages?: PageDoc[];
}

export interface IssueDoc {
  slug: string;
  title: string;
  date: string;
  summary: string | null;
  intro: string;
  stories: { id: string; title: string; body: string }[];
  hash: string;
}

export interface PresentationDoc {
  number: number;
  title: string;
  date: string;
  speaker: string | null;
  summary: string | null;
  slides_url: string | null;
  video_url: string | null;
  notes: string;
  hash: string;
}

export interface NewsDoc {
  id: string;
  title: string;
  url: string;
  date: string;
  note: string;
  hash: string;
}

export interface PageDoc {
  name: string;
  fields: Record<string, string>;
  body: string;
  hash: string;
}

const SLUG = /^[a-z0-9][a-z0-9-]{0,79}$/;
/** Single pages the service knows how to serve. */
const PAGES = ['donate'];

const hashOf = (text: string) => createHash('sha256').update(text).digest('hex');

function markdownFiles(dir: string): { stem: string; path: string }[] | undefined {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return undefined;
  return readdirSync(dir)
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => ({ stem: name.slice(0, -3), path: join(dir, name) }));
}

function stemSlug(stem: string, name: string): string {
  if (!SLUG.test(stem))
    throw new ContentError(`${name}: file names are lower-case letters, digits and dashes (the slug)`);
  return stem;
}

function readIssue(stem: string, path: string, name: string): IssueDoc {
  const text = readFileSync(path, 'utf8');
  const file = parseMarkdownFile(text, name);
  if (file.sections.length === 0) throw new ContentError(`${name}: an issue needs at least one "## " story`);
  return {
    slug: stemSlug(stem, name),
    title: check.required(file.fields, 'title', name),
    date: check.date(check.required(file.fields, 'date', name), name),
    summary: file.fields.summary || null,
    intro: file.intro,
    stories: file.sections.map((s) => ({ id: s.id, title: s.heading, body: s.body })),
    hash: hashOf(text),
  };
}

function readPresentation(stem: string, path: string, name: string): PresentationDoc {
  const text = readFileSync(path, 'utf8');
  const number = /^\d{1,6}$/.test(stem) ? Number(stem) : 0;
  if (number < 1) throw new ContentError(`${name}: a presentation file is named by its number, e.g. 12.md`);
  const file = parseMarkdownFile(text, name);
  return {
    number,
    title: check.required(file.fields, 'title', name),
    date: check.date(check.required(file.fields, 'date', name), name),
    speaker: file.fields.speaker || null,
    summary: file.fields.summary || null,
    slides_url: check.url(file.fields.slides, name),
    video_url: check.url(file.fields.video, name),
    notes: file.body,
    hash: hashOf(text),
  };
}

function readNews(stem: string, path: string, name: string): NewsDoc {
  const text = readFileSync(path, 'utf8');
  const file = parseMarkdownFile(text, name);
  return {
    id: stemSlug(stem, name),
    title: check.required(file.fields, 'title', name),
    url: check.url(check.required(file.fields, 'url', name), name)!,
    date: check.date(check.required(file.fields, 'date', name), name),
    note: file.body,
    hash: hashOf(text),
  };
}

function readPage(name: string, path: string): PageDoc {
  const text = readFileSync(path, 'utf8');
  const file = parseMarkdownFile(text, `${name}.md`);
  check.url(file.fields.url, `${name}.md`);
  for (const section of file.sections) {
    if (name === 'donate' && !TIER_HEADING.test(section.heading))
      throw new ContentError(
        `${name}.md: a tier heading reads "Name (5 USD)" or "Name (25 USD / month)": ${section.heading}`,
      );
  }
  return { name, fields: file.fields, body: file.body, hash: hashOf(text) };
}

/** Reads and checks the whole folder; throws one ContentError listing every problem found. */
export function readContentFolder(root: string): ContentSet {
  if (!existsSync(root) || !statSync(root).isDirectory()) throw new ContentError(`${root} is not a folder`);
  const problems: string[] = [];
  const each = <T>(
    folder: string,
    read: (stem: string, path: string, name: string) => T,
  ): T[] | undefined => {
    const files = markdownFiles(join(root, folder));
    if (!files) return undefined;
    const docs: T[] = [];
    for (const { stem, path } of files) {
      try {
        docs.push(read(stem, path, `${folder}/${stem}.md`));
      } catch (error) {
        if (!(error instanceof ContentError)) throw error;
        problems.push(error.message);
      }
    }
    return docs;
  };
  const set: ContentSet = {
    issues: each('newsletter', readIssue),
    presentations: each('presentations', readPresentation),
    news: each('news', readNews),
  };
  const pages = PAGES.filter((page) => existsSync(join(root, `${page}.md`)));
  if (pages.length > 0) {
    set.pages = [];
    for (const page of pages) {
      try {
        set.pages.push(readPage(page, join(root, `${page}.md`)));
      } catch (error) {
        if (!(error instanceof ContentError)) throw error;
        problems.push(error.message);
      }
    }
  }
  if (problems.length > 0) throw new ContentError(problems.join('\n'));
  return set;
}
