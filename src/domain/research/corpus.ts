import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Executor } from '../../storage/schema.ts';
import { transact, type WritePort } from '../../storage/transactions.ts';
import type { Clocked, Store } from '../ports.ts';
import { GENERATION_KEY } from './corpus-index.ts';
import type { ParsedDocument, Source } from './document.ts';
import { splitIntoPassages } from './passages.ts';
import { type Fetched, parseSource } from './read-source.ts';

/** Metadata the operator gives on the command line; it wins over what the file itself says. */
export interface DocumentMetadata {
  source: Source;
  title?: string;
  authors?: string;
  year?: number;
  url?: string;
}

export interface IngestOutcome {
  id: string;
  title: string;
  status: 'added' | 'replaced' | 'unchanged';
  passages: number;
}

const INSERT_CHUNK = 200;

export function documentId(origin: string): string {
  return `doc_${createHash('sha256').update(origin).digest('hex').slice(0, 16)}`;
}

async function bumpGeneration(trx: Executor): Promise<void> {
  await trx
    .insertInto('settings')
    .values({ key: GENERATION_KEY, value: '1' })
    .onConflict((oc) =>
      oc.column('key').doUpdateSet({ value: sql`cast(cast(settings.value as integer) + 1 as text)` }),
    )
    .execute();
}

/** Reads, splits and stores one file or URL; re-adding the same origin replaces its passages. */
export async function ingest(
  deps: Store & Clocked & WritePort,
  fetched: Fetched,
  metadata: DocumentMetadata,
): Promise<IngestOutcome> {
  const hash = createHash('sha256').update(fetched.bytes).update(JSON.stringify(metadata)).digest('hex');
  const id = documentId(fetched.origin);
  const existing = await deps.db
    .selectFrom('corpus_documents')
    .select(['content_hash', 'title', 'passage_count'])
    .where('id', '=', id)
    .executeTakeFirst();
  if (existing?.content_hash === hash)
    return { id, title: existing.title, status: 'unchanged', passages: Number(existing.passage_count) };
  const parsed = await parseSource(fetched);
  return store(deps, {
    id,
    origin: fetched.origin,
    hash,
    parsed,
    fallbackTitle: fetched.fallbackTitle,
    metadata: { url: fetched.url, ...metadata },
  });
}

interface StoreRequest {
  id: string;
  origin: string;
  hash: string;
  parsed: ParsedDocument;
  fallbackTitle: string;
  metadata: DocumentMetadata;
}

/** Replaces the document and all its passages in one transaction. */
export async function store(deps: Clocked & WritePort, request: StoreRequest): Promise<IngestOutcome> {
  const { id, parsed, metadata } = request;
  const title = metadata.title ?? parsed.title ?? request.fallbackTitle;
  const passages = splitIntoPassages(parsed.sections);
  const status = await transact(deps, async (trx) => {
    const previous = await trx
      .selectFrom('corpus_documents')
      .select('revision')
      .where('id', '=', id)
      .executeTakeFirst();
    await trx.deleteFrom('corpus_passages').where('document_id', '=', id).execute();
    const values = {
      source: metadata.source,
      title,
      authors: metadata.authors ?? parsed.authors ?? '',
      year: metadata.year ?? parsed.year ?? null,
      url: metadata.url ?? null,
      body: '',
      origin: request.origin,
      content_hash: request.hash,
      passage_count: passages.length,
      revision: Number(previous?.revision ?? 0) + 1,
      added_at: deps.clock.now(),
    };
    if (previous) await trx.updateTable('corpus_documents').set(values).where('id', '=', id).execute();
    else
      await trx
        .insertInto('corpus_documents')
        .values({ id, ...values })
        .execute();
    for (let i = 0; i < passages.length; i += INSERT_CHUNK) {
      await trx
        .insertInto('corpus_passages')
        .values(
          passages.slice(i, i + INSERT_CHUNK).map((p) => ({
            document_id: id,
            position: p.position,
            source: metadata.source,
            title,
            section: p.section,
            body: p.body,
          })),
        )
        .execute();
    }
    await bumpGeneration(trx);
    return previous ? 'replaced' : 'added';
  });
  return { id, title, status, passages: passages.length };
}

export async function listDocuments(deps: Store) {
  return deps.db
    .selectFrom('corpus_documents')
    .select(['id', 'source', 'title', 'authors', 'year', 'url', 'origin', 'passage_count', 'added_at'])
    .orderBy('source')
    .orderBy('title')
    .execute();
}

/** Removes a document by id or by the path/URL it was added from; false when there was none. */
export async function removeDocument(deps: WritePort, idOrOrigin: string): Promise<boolean> {
  return transact(deps, async (trx) => {
    const row = await trx
      .selectFrom('corpus_documents')
      .select('id')
      .where((eb) => eb.or([eb('id', '=', idOrOrigin), eb('origin', '=', idOrOrigin)]))
      .executeTakeFirst();
    if (!row) return false;
    await trx.deleteFrom('corpus_passages').where('document_id', '=', row.id).execute();
    await trx.deleteFrom('corpus_documents').where('id', '=', row.id).execute();
    await bumpGeneration(trx);
    return true;
  });
}

/**
 * Makes every instance rebuild its index from the stored passages at its next search; on PostgreSQL
 * each instance also copies every document afresh (after a passage table was edited by hand, say).
 */
export async function reindex(deps: Store): Promise<number> {
  await deps.db.updateTable('corpus_documents').set({ revision: sql`revision + 1` }).execute();
  await bumpGeneration(deps.db);
  const row = await deps.db
    .selectFrom('corpus_passages')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
