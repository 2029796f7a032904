/**
 * The identifiers the A2A methods take from a request, judged before any query: PostgreSQL's text
 * refuses U+0000, and an id this server could not have given names nothing it keeps.
 */

/** Task ids are the UUIDs keepTask gives (randomUUID, lower case). */
const TASK_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The longest context id a client may name; the ones this server gives are UUIDs. */
export const MAX_CONTEXT_ID = 200;
/** Longest page token ListTasks hands out (base64url of `updatedAt:id`), with room to spare. */
const MAX_PAGE_TOKEN = 200;

/** Control characters (U+0000 among them) and lone surrogates, which no id of ours holds. */
const UNFIT = /[\p{Cc}\p{Cs}]/u;

export function isTaskId(value: string): boolean {
  return TASK_ID.test(value);
}

/** A context id a client names: at most MAX_CONTEXT_ID characters, no control character or lone surrogate. */
export function isContextId(value: string): boolean {
  return value.length <= MAX_CONTEXT_ID && !UNFIT.test(value);
}

/** The position a ListTasks page token names, or null when it is not one this server gave. */
export function pagePosition(token: string): { updatedAt: number; id: string } | null {
  if (token.length > MAX_PAGE_TOKEN) return null;
  const match = /^(\d{1,16}):(.+)$/.exec(Buffer.from(token, 'base64url').toString());
  if (!match || !isTaskId(match[2])) return null;
  const updatedAt = Number(match[1]);
  return Number.isSafeInteger(updatedAt) ? { updatedAt, id: match[2] } : null;
}
