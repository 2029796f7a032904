import { html, type SafeHtml } from './html.ts';

/**
 * A highlight story as the community sees it, from the fields agents written for the reference
 * service send (member_name, action, event_title, event_url, date, dek, stats, images). The contract
 * fixes only `id`, so every field is read defensively: a missing one is left out, one of the wrong
 * type is ignored, and fields this card does not know are listed under it for the moderator.
 */
const KNOWN = new Set([
  'id',
  'member_name',
  'member_id',
  'action',
  'event_title',
  'event_url',
  'date',
  'dek',
  'stats',
  'images',
]);
const TEXT_MAX = 600;

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim()
    ? value.trim().slice(0, TEXT_MAX)
    : typeof value === 'number'
      ? String(value)
      : undefined;

const httpsUrl = (value: unknown): string | undefined => {
  if (typeof value !== 'string') return undefined;
  try {
    return new URL(value).protocol === 'https:' ? value : undefined;
  } catch {
    return undefined;
  }
};

export function parseStory(stored: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(stored);
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/** `forModerator` adds the fields the card does not show, so nothing submitted goes unseen. */
export function storyCard(
  story: Record<string, unknown>,
  options: { forModerator?: boolean; headingLevel?: 2 | 3 } = {},
): SafeHtml {
  const name = text(story.member_name);
  const action = text(story.action);
  const event = text(story.event_title);
  const eventUrl = httpsUrl(story.event_url);
  const date = text(story.date);
  const dek = text(story.dek);
  const image = Array.isArray(story.images) ? story.images.map(httpsUrl).find(Boolean) : undefined;
  const stats = Array.isArray(story.stats)
    ? story.stats.flatMap((stat) => {
        if (!stat || typeof stat !== 'object') return [];
        const { label, value } = stat as Record<string, unknown>;
        return text(label) && text(value) ? [{ label: text(label), value: text(value) }] : [];
      })
    : [];
  const headline =
    // Never the story's id: a moderator sees it beside the card, a reader has no use for it.
    [name, action, event ? (action ? `at ${event}` : event) : undefined].filter(Boolean).join(' ') ||
    'Untitled story';
  const extra = options.forModerator ? Object.entries(story).filter(([key]) => !KNOWN.has(key)) : [];
  const heading = options.headingLevel === 2 ? html`<h2>${headline}</h2>` : html`<h3>${headline}</h3>`;
  return html`<article class="story">${image ? html`<img src="${image}" alt="${event ? `Photo from ${event}` : 'Photo from the event'}" loading="lazy">` : ''}
<div class="body"><p class="kicker">${[date, event].filter(Boolean).join(' · ') || 'Highlight'}</p>
${heading}
${dek ? html`<p>${dek}</p>` : ''}
${stats.length ? html`<ul class="stats">${stats.map((stat) => html`<li><strong>${stat.value}</strong> ${stat.label}</li>`)}</ul>` : ''}
${eventUrl ? html`<p><a href="${eventUrl}">About the event${event ? html`<span class="visually-hidden"> ${event}</span>` : ''}</a></p>` : ''}
${
  extra.length
    ? html`<details class="extra"><summary>Other fields the agent sent (${extra.length})</summary><dl class="facts">${extra.map(
        ([key, value]) =>
          html`<dt>${key}</dt><dd><code>${JSON.stringify(value).slice(0, TEXT_MAX)}</code></dd>`,
      )}</dl></details>`
    : ''
}</div></article>`;
}
