import { randomBytes } from 'node:crypto';
import { deriveFromSecret } from '../../secrets.ts';
import { feedback } from '../../storage/feedback.ts';
import type { FeedbackTable } from '../../storage/schema.ts';
import type { Clocked, Configured, Store } from '../ports.ts';
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

/**
 * Made once per process for when the operator set no IP_HASH_SECRET: never stored, so hashes group
 * only within this process, and a copy of the database alone cannot turn a hash back into an address.
 */
const PROCESS_KEY = randomBytes(32).toString('hex');

/** The sender's address as kept: keyed with a secret that lives outside the database (IP_HASH_SECRET). */
export function addressHash(config: { ipHashSecret?: string }, ip: string): string {
  return deriveFromSecret(config.ipHashSecret ?? PROCESS_KEY, `feedback-ip:${ip}`);
}

function optional(value: string | undefined): string | null {
  if (value === undefined) return null;
  const clean = sanitizeText(value);
  return clean === '' ? null : clean;
}

export async function fileFeedback(
  deps: Store & Clocked & Configured<'ipHashSecret'>,
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
    ip_hash: addressHash(deps.config, ip),
    warnings: JSON.stringify(warnings),
    status: 'open',
    created_at: now,
  };
  await feedback.insert(deps.db, row);
  return row;
}
