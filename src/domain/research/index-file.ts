import { readFileSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { crc32 } from 'node:zlib';

/**
 * The research index kept on disk between starts, so an instance answers its first question in about
 * the time it takes to read the file rather than re-indexing every passage (half a minute at a million).
 *
 * The file is a cache, never the truth: it is stamped with the corpus generation and the passage
 * table's count and highest id, and any mismatch, short file or bad checksum means "build afresh".
 * It is written beside its final name and renamed into place, so a crash mid-write leaves the old
 * file or none.
 *
 * Layout: a little-endian uint32 header length, the JSON header, then the sections, each at an offset
 * that is a multiple of 8 so typed arrays can view the one Buffer the file is read into (no copy).
 */

const MAGIC = 'agent-commons research index';
/** 2: passage positions in 24 bits (a low 16-bit and a high 8-bit array) instead of 32. */
const FORMAT = 2;
const ALIGN = 8;

/** What the index was built from: a file stamped otherwise is stale. */
export interface IndexStamp {
  generation: string;
  passages: number;
  maxPassageId: number;
}

/** The arrays a PassageIndex is made of, and how long building them took. */
export interface IndexParts {
  terms: string[];
  termStarts: Uint32Array;
  /** A posting's passage position, 24 bits: its low 16 bits here and its high 8 in postingHighs. */
  postingLows: Uint16Array;
  postingHighs: Uint8Array;
  postingImpacts: Uint16Array;
  termMaxImpacts: Uint16Array;
  passageIds: Float64Array;
  passageSources: Uint8Array;
  buildMs: number;
}

type ArrayName = Exclude<keyof IndexParts, 'terms' | 'buildMs'>;
const ARRAYS = {
  termStarts: Uint32Array,
  postingLows: Uint16Array,
  postingHighs: Uint8Array,
  postingImpacts: Uint16Array,
  termMaxImpacts: Uint16Array,
  passageIds: Float64Array,
  passageSources: Uint8Array,
} as const satisfies Record<ArrayName, unknown>;

interface Header {
  magic: string;
  format: number;
  stamp: IndexStamp;
  buildMs: number;
  /** Section name → [offset, byte length] from the start of the file. */
  sections: Record<string, [number, number]>;
  crc: number;
}

const aligned = (n: number) => Math.ceil(n / ALIGN) * ALIGN;

/** Writes the index to `path` (atomically: a temporary file renamed into place). */
export async function writeIndexFile(path: string, parts: IndexParts, stamp: IndexStamp): Promise<void> {
  const sections: [string, Uint8Array][] = [['terms', Buffer.from(parts.terms.join('\n'))]];
  for (const name of Object.keys(ARRAYS) as ArrayName[]) {
    const array = parts[name];
    sections.push([name, new Uint8Array(array.buffer, array.byteOffset, array.byteLength)]);
  }
  let crc = 0;
  for (const [, bytes] of sections) crc = crc32(bytes, crc);
  // The header's own length moves the offsets; lay them out against a generous header size.
  const layout = (headerBytes: number) => {
    let at = aligned(4 + headerBytes);
    const placed: Record<string, [number, number]> = {};
    for (const [name, bytes] of sections) {
      placed[name] = [at, bytes.byteLength];
      at = aligned(at + bytes.byteLength);
    }
    return placed;
  };
  let headerText = '';
  for (let guess = 256; ; guess *= 2) {
    const header: Header = {
      magic: MAGIC,
      format: FORMAT,
      stamp,
      buildMs: parts.buildMs,
      sections: layout(guess),
      crc,
    };
    headerText = JSON.stringify(header).padEnd(guess, ' ');
    if (Buffer.byteLength(headerText) === guess) break;
  }
  const temporary = `${path}.${process.pid}.tmp`;
  const file = await open(temporary, 'w');
  try {
    const headerBytes = Buffer.from(headerText);
    const length = Buffer.alloc(4);
    length.writeUInt32LE(headerBytes.byteLength);
    await file.write(length, 0, 4, 0);
    await file.write(headerBytes, 0, headerBytes.byteLength, 4);
    const placed = (JSON.parse(headerText) as Header).sections;
    for (const [name, bytes] of sections) await file.write(bytes, 0, bytes.byteLength, placed[name][0]);
    await file.close();
    await rename(temporary, path);
  } catch (error) {
    await file.close().catch(() => {});
    await rm(temporary, { force: true });
    throw error;
  }
}

/**
 * The index stored at `path` if it was built from exactly `stamp`; undefined when there is none,
 * it is stale, or it does not read back whole.
 */
export function readIndexFile(path: string, stamp: IndexStamp): IndexParts | undefined {
  let file: Buffer;
  try {
    file = readFileSync(path);
  } catch {
    return undefined;
  }
  try {
    const headerLength = file.readUInt32LE(0);
    const header = JSON.parse(file.subarray(4, 4 + headerLength).toString()) as Header;
    if (header.magic !== MAGIC || header.format !== FORMAT) return undefined;
    const { generation, passages, maxPassageId } = header.stamp;
    if (generation !== stamp.generation || passages !== stamp.passages || maxPassageId !== stamp.maxPassageId)
      return undefined;
    const bytesOf = (name: string) => {
      const [offset, length] = header.sections[name];
      if (offset % ALIGN !== 0 || offset + length > file.byteLength) throw new Error('section out of bounds');
      return new Uint8Array(file.buffer, file.byteOffset + offset, length);
    };
    let crc = 0;
    for (const name of ['terms', ...Object.keys(ARRAYS)]) crc = crc32(bytesOf(name), crc);
    if (crc !== header.crc) return undefined;
    const view = <A extends ArrayName>(name: A): IndexParts[A] => {
      const bytes = bytesOf(name);
      const Type = ARRAYS[name];
      // A Buffer's memory is 8-aligned in practice; copy rather than fail if it ever is not.
      const source = bytes.byteOffset % ALIGN === 0 ? bytes : bytes.slice();
      return new Type(
        source.buffer as ArrayBuffer,
        source.byteOffset,
        source.byteLength / Type.BYTES_PER_ELEMENT,
      ) as IndexParts[A];
    };
    const termsText = Buffer.from(bytesOf('terms')).toString();
    const parts: IndexParts = {
      terms: termsText === '' ? [] : termsText.split('\n'),
      termStarts: view('termStarts'),
      postingLows: view('postingLows'),
      postingHighs: view('postingHighs'),
      postingImpacts: view('postingImpacts'),
      termMaxImpacts: view('termMaxImpacts'),
      passageIds: view('passageIds'),
      passageSources: view('passageSources'),
      buildMs: header.buildMs,
    };
    return consistent(parts, passages) ? parts : undefined;
  } catch {
    return undefined;
  }
}

/** The sizes agree with each other and with the stamp, so a search cannot index out of bounds. */
function consistent(parts: IndexParts, passages: number): boolean {
  const terms = parts.terms.length;
  const postings = parts.postingLows.length;
  return (
    parts.passageIds.length === passages &&
    parts.passageSources.length === passages &&
    parts.termStarts.length === terms + 1 &&
    parts.termMaxImpacts.length === terms &&
    parts.postingHighs.length === postings &&
    parts.postingImpacts.length === postings &&
    parts.termStarts[terms] === postings
  );
}
