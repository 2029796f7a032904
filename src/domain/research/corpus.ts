import { createHash } from 'node:crypto';
import { corpus } from '../../storage/corpus.ts';
import { transact, type WritePort } from '../../storage/transactions.ts';
import type { Clocked, Store } from '../ports.ts';
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

/** Reads, splits and stores one file or URL; re-adding the same origin replaces its passages. */
export async function ingest(
  deps: Store & Clocked & WritePort,
  fetched: Fetched,
  metadata: DocumentMetadata,
): Promise<IngestOutcome> {
  const hash = createHash('sha256').update(fetched.bytes).update(JSON.stringify(metadata)).digest('hex');
  const id = documentId(fetched.origin);
  const existing = await corpus.stamp(deps.db, id);
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
    const previous = await corpus.revisionOf(trx, id);
    await corpus.removePassagesOf(trx, id);
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
      revision: (previous ?? 0) + 1,
      added_at: deps.clock.now(),
    };
    if (previous !== undefined) await corpus.updateDocument(trx, id, values);
    else await corpus.insertDocument(trx, id, values);
    for (let i = 0; i < passages.length; i += INSERT_CHUNK) {
      await corpus.insertPassages(
        trx,
        passages.slice(i, i + INSERT_CHUNK).map((p) => ({
          document_id: id,
          position: p.position,
          source: metadata.source,
          title,
          section: p.section,
          body: p.body,
        })),
      );
    }
    await corpus.bumpGeneration(trx);
    return previous !== undefined ? 'replaced' : 'added';
  });
  return { id, title, status, passages: passages.length };
}

export async function listDocuments(deps: Store) {
  return corpus.documents(deps.db);
}

/** Removes a document by id or by the path/URL it was added from; false when there was none. */
export async function removeDocument(deps: WritePort, idOrOrigin: string): Promise<boolean> {
  return transact(deps, async (trx) => {
    const id = await corpus.idOf(trx, idOrOrigin);
    if (id === undefined) return false;
    await corpus.removePassagesOf(trx, id);
    await corpus.removeDocument(trx, id);
    await corpus.bumpGeneration(trx);
    return true;
  });
}

/**
 * Makes every instance rebuild its index from the stored passages at its next search; on PostgreSQL
 * each instance also copies every document afresh (after a passage table was edited by hand, say).
 */
export async function reindex(deps: Store): Promise<number> {
  await corpus.bumpEveryRevision(deps.db);
  await corpus.bumpGeneration(deps.db);
  return corpus.countPassages(deps.db);
}
