import MarkdownIt from 'markdown-it';
import type { Issue } from './newsletter.ts';

/**
 * Markdown to HTML for the feeds and pages. Raw HTML in the source is escaped, not passed through
 * (`html: false`), and markdown-it refuses javascript:, vbscript:, file: and data: links, so what
 * an operator (or a compromised content folder) writes cannot inject script into a reader.
 */
const markdown = new MarkdownIt({ html: false, linkify: false, typographer: false });

export function renderMarkdown(source: string): string {
  return markdown.render(source);
}

/** The whole issue as one Markdown document: the intro, then each story under its own heading. */
export function issueMarkdown(issue: Issue): string {
  return [issue.intro, ...issue.stories.map((story) => `## ${story.title}\n\n${story.body}`)]
    .filter(Boolean)
    .join('\n\n');
}
