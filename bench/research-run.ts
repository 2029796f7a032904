// npm run bench:research — research retrieval alone: ingestion of the real corpus, relevance against
// minisearch, and ask latency at RESEARCH_BENCH_SIZES passages (default 100k and 1M; the 1M copy
// takes about a minute). npm run bench ends with the same.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realCorpusFiles } from '../src/domain/research/real-corpus.ts';
import { askLatency, relevance, replicate } from './research.ts';
import { cli, pinLoadGenerator, report } from './support.ts';

export async function researchBench(sizes: number[]): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'agent-commons-research-'));
  const file = join(dir, 'research.db');
  const env = {
    DATABASE_URL: `sqlite:${file}`,
    SEED_DEMO: 'false',
    LOG_LEVEL: 'warn',
    // As every bench server (bench/support.ts): the resident figures are never taken after a trim.
    MEMORY_TRIM_IDLE_MS: '0',
    LIMIT_RESEARCH_PER_HOUR: '100000000',
    LIMIT_TOKEN_PER_MINUTE: '100000000',
  };
  try {
    cli(['migrate'], env);
    const files = realCorpusFiles('full');
    if (files.length === 0)
      throw new Error('the real corpus is not installed (apt-get install sqlite3-doc bash-doc)');
    let passages = 0;
    let seconds = 0;
    for (const source of ['paper', 'book'] as const) {
      const paths = files.filter((f) => f.metadata.source === source);
      for (const f of paths) {
        const args = ['corpus', 'add', f.path, '--source', source, '--json'];
        for (const key of ['authors', 'url', 'title'] as const)
          if (f.metadata[key]) args.push(`--${key}`, String(f.metadata[key]));
        if (f.metadata.year) args.push('--year', String(f.metadata.year));
        const out = JSON.parse(cli(args, env));
        passages += out.passages;
        seconds += out.seconds;
      }
    }
    console.log(
      `research ingestion: ${files.length} documents, ${passages} passages, ${Math.round(passages / seconds)} passages/s (parse, split, store and index)`,
    );
    const quality = await relevance(file);
    console.log(
      `research relevance (${quality.queries} labelled queries, ${quality.passages} passages, ${quality.sectionFallbacks} section labels fell back to the document): nDCG@10 ours ${quality.ours.ndcg10} vs minisearch BM25 ${quality.minisearch.ndcg10}; recall@10 ours ${quality.ours.recall10} vs minisearch ${quality.minisearch.recall10}`,
    );
    const rows = [];
    for (const size of sizes) {
      const grown = replicate(file, size);
      console.log(
        `research corpus replicated to ${grown.total} passages: ${grown.passagesPerSecond} passages/s indexed, ${grown.mbPerMillion} MB on disk per million passages`,
      );
      rows.push(...(await askLatency(env, `${Math.round(grown.total / 1000)}k passages`)));
    }
    report(rows);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  pinLoadGenerator();
  const sizes = (process.env.RESEARCH_BENCH_SIZES ?? '100000,1000000').split(',').map(Number);
  await researchBench(sizes);
}
