import { type ParsedDocument, type Section, yearIn } from './document.ts';

interface TextItem {
  str?: string;
  hasEOL?: boolean;
}

/** PDF: one section per page (named "Page N"); title, author and year from the document information. */
export async function readPdf(bytes: Uint8Array): Promise<ParsedDocument> {
  // Loaded on first use: the library is large and only ingestion needs it.
  const { getDocument } = await import('pdfjs-dist/legacy/build/pdf.mjs');
  const task = getDocument({ data: new Uint8Array(bytes), verbosity: 0 });
  const pdf = await task.promise;
  try {
    const { info } = (await pdf.getMetadata()) as unknown as { info?: Record<string, unknown> };
    const sections: Section[] = [];
    for (let number = 1; number <= pdf.numPages; number++) {
      const page = await pdf.getPage(number);
      const content = await page.getTextContent();
      let text = '';
      for (const item of content.items as TextItem[]) {
        text += item.str ?? '';
        if (item.hasEOL) text += '\n';
      }
      // A line ending a sentence closes a paragraph: PDF text has no paragraph marks of its own.
      text = text.replace(/([.!?:])\n/g, '$1\n\n');
      if (text.trim()) sections.push({ heading: `Page ${number}`, text });
      page.cleanup();
    }
    const text = (key: string) => (typeof info?.[key] === 'string' ? (info[key] as string).trim() : '');
    return {
      title: text('Title') || undefined,
      authors: text('Author') || undefined,
      year: yearIn(text('CreationDate').replace(/^D:/, '').slice(0, 4)),
      sections,
    };
  } finally {
    await task.destroy();
  }
}
