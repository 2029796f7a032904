// Small corpora the research tests write for themselves: one file per format, and a minimal PDF
// built here (one page, standard font) so the PDF reader is exercised without shipping a binary.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DocumentMetadata, ingest } from '../../src/domain/research/corpus.ts';
import { fetchSource } from '../../src/domain/research/read-source.ts';
import type { Deps } from '../../src/operations/services.ts';

/** A one-page PDF whose page shows the given lines, with Title/Author/CreationDate information. */
export function tinyPdf(lines: string[], info: { title: string; author: string; year: number }): Buffer {
  const pdfString = (s: string) => s.replace(/[\\()]/g, (c) => `\\${c}`);
  const text = lines
    .map((line, i) => `BT /F1 12 Tf 72 ${720 - i * 16} Td (${pdfString(line)}) Tj ET`)
    .join('\n');
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${Buffer.byteLength(text)} >>\nstream\n${text}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    `<< /Title (${pdfString(info.title)}) /Author (${pdfString(info.author)}) /CreationDate (D:${info.year}0101000000Z) >>`,
  ];
  let body = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(Buffer.byteLength(body));
    body += `${i + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = Buffer.byteLength(body);
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) body += `${String(offset).padStart(10, '0')} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R /Info 6 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'agent-commons-corpus-test-'));
}

export function writeFile(dir: string, name: string, content: string | Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

export async function add(deps: Deps, path: string, metadata: DocumentMetadata) {
  return ingest(deps, await fetchSource(path, deps.config.research), metadata);
}

/** Three papers and a book about distinct subjects, so each query has one right answer. */
export const SMALL_CORPUS: { name: string; source: 'paper' | 'book'; text: string }[] = [
  {
    name: 'lighthouses.md',
    source: 'paper',
    text: '# Lighthouse optics\n\n## Fresnel lenses\n\nA Fresnel lens bends the beam of a lighthouse lamp with concentric prisms, so a small flame is seen far out at sea.\n\n## Rotation\n\nThe lens turns on a bath of mercury; each flash marks the lighthouse by its period.\n',
  },
  {
    name: 'bees.md',
    source: 'paper',
    text: '# Honeybee navigation\n\n## The waggle dance\n\nA forager returning to the hive performs a waggle dance whose angle gives the direction of the flowers relative to the sun.\n\n## Distance\n\nThe duration of the waggle run encodes the distance to the food.\n',
  },
  {
    name: 'tides.md',
    source: 'paper',
    text: '# Tides\n\n## Spring and neap tides\n\nWhen the sun and moon align, their pulls add up and spring tides are highest; at right angles they give neap tides.\n',
  },
  {
    name: 'baking.md',
    source: 'book',
    text: '# The bread book\n\n## Sourdough starter\n\nA sourdough starter is flour and water colonised by wild yeast and lactic bacteria; feed it daily.\n\n## Lighthouse loaf\n\nA tall loaf baked in a tin, named for its shape.\n',
  },
];

export async function addSmallCorpus(deps: Deps): Promise<void> {
  const dir = tempDir();
  for (const doc of SMALL_CORPUS)
    await add(deps, writeFile(dir, doc.name, doc.text), {
      source: doc.source,
      authors: 'Test Author',
      year: 2020,
    });
}
