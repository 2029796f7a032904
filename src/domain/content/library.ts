import { library } from '../../storage/library.ts';
import type { Store } from '../ports.ts';
import { parseSections } from './markdown-file.ts';

export interface PresentationSummary {
  number: number;
  title: string;
  date: string;
  speaker: string | null;
  summary: string | null;
}

export interface Presentation extends PresentationSummary {
  slides_url: string | null;
  video_url: string | null;
  /** Markdown. */
  notes: string;
}

/** Newest number first. */
export async function listPresentations(deps: Store, limit: number): Promise<PresentationSummary[]> {
  return library.presentations(deps.db, limit);
}

export async function getPresentation(deps: Store, number: number): Promise<Presentation | undefined> {
  return library.presentation(deps.db, number);
}

export interface NewsLink {
  id: string;
  title: string;
  url: string;
  date: string;
  /** Markdown. */
  note: string;
}

/** Newest first. */
export async function listNews(deps: Store, limit: number): Promise<NewsLink[]> {
  return library.news(deps.db, limit);
}

export interface DonationTier {
  name: string;
  amount: number;
  currency: string;
  /** `month`, `year`, or null for a one-off gift. */
  per: string | null;
  /** Markdown. */
  description: string;
}

export interface DonationPage {
  title: string;
  /** Markdown: how to give. */
  how_to_give: string;
  give_url: string | null;
  tiers: DonationTier[];
}

/** A tier heading: `Friend (5 USD)` or `Patron (25 USD / month)`. */
export const TIER_HEADING = /^(.+?)\s*\((\d+(?:\.\d{1,2})?)\s+([A-Z]{3})(?:\s*\/\s*(month|year))?\)$/;

/** The donation page the operator published in `donate.md`, or undefined when there is none. */
export async function donationPage(deps: Store): Promise<DonationPage | undefined> {
  const row = await library.page(deps.db, 'donate');
  if (!row) return undefined;
  const fields = JSON.parse(row.fields) as Record<string, string>;
  const { intro, sections } = parseSections(row.body, 'donate.md');
  return {
    title: fields.title ?? 'Donate',
    how_to_give: intro,
    give_url: fields.url || null,
    tiers: sections.flatMap((section) => {
      const match = TIER_HEADING.exec(section.heading);
      if (!match) return [];
      return [
        {
          name: match[1],
          amount: Number(match[2]),
          currency: match[3],
          per: match[4] ?? null,
          description: section.body,
        },
      ];
    }),
  };
}
