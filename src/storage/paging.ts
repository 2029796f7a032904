import type { SelectQueryBuilder } from 'kysely';

/**
 * Keyset paging for lists that grow without bound (the operator queues): rows in (time, id) order,
 * a page at most `limit` long, and an opaque cursor naming the last row shown. A row added between
 * two pages never shifts the next one, and no page costs more than its own rows.
 */
export interface PageRequest {
  limit: number;
  after?: PagePosition;
}

export interface PagePosition {
  at: number;
  id: string;
}

export interface Page<Row> {
  rows: Row[];
  /** Where the next page starts, or null when this one is the last. */
  next: PagePosition | null;
}

export function encodeCursor(position: PagePosition): string {
  return Buffer.from(JSON.stringify([position.at, position.id])).toString('base64url');
}

/** The position a cursor names, or undefined when it is not one this service gave out. */
export function decodeCursor(cursor: string): PagePosition | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Array.isArray(value) || value.length !== 2) return undefined;
    const [at, id] = value;
    if (!Number.isSafeInteger(at) || typeof id !== 'string' || id.length > 200 || id.includes('\0'))
      return undefined;
    return { at, id };
  } catch {
    return undefined;
  }
}

/**
 * One page of `query` ordered by its time column then its id column, newest first (`desc`) or
 * oldest first. The query's rows must carry both columns.
 */
export async function pageOf<DB, TB extends keyof DB, Row>(
  query: SelectQueryBuilder<DB, TB, Row>,
  order: { time: string; id: string; direction: 'asc' | 'desc' },
  page: PageRequest,
): Promise<Page<Row>> {
  const { time: timeColumn, id: idColumn, direction } = order;
  // Kysely cannot type a column chosen at run time; the names come from our own list functions.
  let paged = query as SelectQueryBuilder<any, any, Row>;
  if (page.after) {
    const { at, id } = page.after;
    const past = direction === 'desc' ? '<' : '>';
    // A row value, (time, id) > (at, id): both engines walk a (time, id) index from the position,
    // where the same bound written as an OR of two ranges may be read as two and sorted again.
    paged = paged.where((eb) => eb(eb.refTuple(timeColumn, idColumn), past, eb.tuple(at, id)));
  }
  const rows = await paged
    .orderBy(timeColumn, direction)
    .orderBy(idColumn, direction)
    .limit(page.limit + 1)
    .execute();
  const more = rows.length > page.limit;
  if (more) rows.length = page.limit;
  const last = rows.at(-1) as Record<string, unknown> | undefined;
  // A column named with its table (`bookings.id`, in a join) is the row's key without it.
  const key = (column: string) => column.slice(column.lastIndexOf('.') + 1);
  return {
    rows,
    next: more && last ? { at: Number(last[key(timeColumn)]), id: String(last[key(idColumn)]) } : null,
  };
}

/** Every row, page by page (for the CLI, whose operator asked for the whole list). */
export async function allRows<Row>(list: (page: PageRequest) => Promise<Page<Row>>): Promise<Row[]> {
  const rows: Row[] = [];
  let page: PageRequest = { limit: 500 };
  for (;;) {
    const next = await list(page);
    rows.push(...next.rows);
    if (!next.next) return rows;
    page = { limit: 500, after: next.next };
  }
}
