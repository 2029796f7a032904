import { randomBytes } from 'node:crypto';
import { sha256 } from '../../secrets.ts';
import type { FeedbackTable } from '../../storage/schema.ts';
import type { Clocked, Store } from '../ports.ts';
import { looksLikePromptInjection, sanitizeText } from './sanitize.ts';

export const FEEDBACK_CATEGORIES = [
  'broken_url',
  'schema_mismatch',
  'stale_doc',
  'endpoint_404',
  'bug_report',
  'other',
  'feature_request',
  'praise',
  'complaint',
  'question',
  'suggestion',
] as const;

export type FeedbackCategory = (typeof FEEDBACK_CATEGORIES)[number];

export interface FeedbackInput {
  message: string;
  category: FeedbackCategory;
  categoryText?: string;
  priority: 'low' | 'normal' | 'high';
  url?: string;
  expected?: string;
  got?: string;
  agentId?: string;
  contact?: string;
}

export interface Attribution {
  memberId: string;
  tokenId: string;
}

const SHORT_MESSAGE = 40;

function ticketId(now: number): string {
  const stamp = new Date(now).toISOString().replace(/[-:]/g, '').replace(/\.\d+/, '');
  return `fb_${stamp}_${randomBytes(6).toString('hex')}`;
}

/** The salt lives in the database so every instance hashes an IP the same way. */
async function ipSalt(deps: Store): Promise<string> {
  const existing = await deps.db
    .selectFrom('settings')
    .select('value')
    .where('key', '=', 'ip_salt')
    .executeTakeFirst();
  if (existing) return existing.value;
  await deps.db
    .insertInto('settings')
    .values({ key: 'ip_salt', value: randomBytes(16).toString('hex') })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const row = await deps.db
    .selectFrom('settings')
    .select('value')
    .where('key', '=', 'ip_salt')
    .executeTakeFirstOrThrow();
  return row.value;
}

function optional(value: string | undefined): string | null {
  if (value === undefined) return null;
  const clean = sanitizeText(value);
  return clean === '' ? null : clean;
}

export async function fileFeedback(
  deps: Store & Clocked,
  input: FeedbackInput,
  ip: string,
  attribution: Attribution | undefined,
  extraWarnings: string[] = [],
): Promise<FeedbackTable> {
  const now = deps.clock.now();
  const message = sanitizeText(input.message);
  const warnings = [...extraWarnings];
  if (message.length < SHORT_MESSAGE) {
    warnings.push(
      `message is under ${SHORT_MESSAGE} characters; say what you did, what you expected and what you got.`,
    );
  }
  const categoryText = optional(input.categoryText);
  const expected = optional(input.expected);
  const got = optional(input.got);
  // Scanned as stored: hidden characters must not split a phrase the moderator will then read whole.
  const texts = [message, expected, got, categoryText].filter(Boolean).join('\n');
  if (looksLikePromptInjection(texts)) {
    warnings.push(
      'message looks like instructions to a model; it is filed as data and will be read by a human.',
    );
  }
  const row: FeedbackTable = {
    ticket_id: ticketId(now),
    member_id: attribution?.memberId ?? null,
    token_id: attribution?.tokenId ?? null,
    category: input.category,
    category_text: categoryText,
    priority: input.priority,
    message,
    url: optional(input.url),
    expected,
    got,
    agent_id: optional(input.agentId),
    contact: optional(input.contact),
    ip_hash: sha256(`${await ipSalt(deps)}:${ip}`),
    warnings: JSON.stringify(warnings),
    status: 'open',
    created_at: now,
  };
  await deps.db.insertInto('feedback').values(row).execute();
  return row;
}
