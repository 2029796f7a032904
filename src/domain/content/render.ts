import type { Issue } from './newsletter.ts';

let markdown: Promise<{ render(source: string): string }> | undefined;

/**
 * Markdown to HTML for the feeds and pages. Raw HTML in the source is escaped, not passed through
 * (`html: false`), and markdown-it refuses javascript:, vbscript:, file: and data: links, so what
 * an operator (or a compromised content folder) writes cannot inject script into a reader.
 * markdown-it is loaded at the first rendering: most instances serve no newsletter.
 */
export async function renderMarkdown(source: string): Promise<string> {
  markdown ??= import('markdown-it').then(
    ({ default: MarkdownIt }) => new MarkdownIt({ html: false, linkify: false, typographer: false }),
  );
  return (await markdown).render(source);
}

/** The whole issue as one Markdown document: the intro, then each story under its own heading. */
export function issueMarkdown(issue: Issue): string {
  return [issue.intro, ...issue.stories.map((story) => `## ${story.title}\n\n${story.body}`)]
    .filter(Boolean)
    .join('\n\n');
}
