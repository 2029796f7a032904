// The language model behind research synthesis, and the corpus documents fetched from URLs.
import { baseUrl, durationMs, flag, integer, oneOf, optional, refuse, setting } from './settings.ts';

export const MODEL_CLASSES = ['small', 'medium', 'large'] as const;
export type ModelClass = (typeof MODEL_CLASSES)[number];

const PROVIDERS = ['none', 'openai', 'anthropic'] as const;
type Provider = (typeof PROVIDERS)[number];

const PROVIDER_BASE_URLS: Record<Provider, string> = {
  none: 'http://127.0.0.1',
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
};

interface ProviderRead {
  research: { provider: Provider };
}

/** A provider needs a model identifier for every class; without one, the classes name the offline synthesizer. */
function model(modelClass: ModelClass) {
  const env = `RESEARCH_MODEL_${modelClass.toUpperCase()}`;
  const spec = {
    env,
    group: 'research',
    trim: true,
    accepts: 'string',
    defaultText: `\`extractive-${modelClass}\`; required with a provider`,
    description:
      `The provider's model identifier for the \`${modelClass}\` class; callers send ` +
      '`small`/`medium`/`large` or one of these identifiers.',
  } as const;
  return setting<string, ProviderRead>(spec, (raw, loaded) => {
    const provider = loaded.research.provider;
    if (provider !== 'none' && raw === undefined)
      throw refuse(spec, `set when RESEARCH_PROVIDER is ${provider}`);
    return raw ?? `extractive-${modelClass}`;
  });
}

/** The language model research synthesis calls; no provider: the offline extractive synthesizer. */
export const RESEARCH_SCHEMA = {
  provider: oneOf({
    env: 'RESEARCH_PROVIDER',
    group: 'research',
    values: PROVIDERS,
    default: 'none',
    description:
      '`openai` (any OpenAI-compatible chat-completions API), `anthropic` (messages API), or `none`: ' +
      'the offline extractive synthesizer answers (`via: "extractive"`).',
  }),
  models: { small: model('small'), medium: model('medium'), large: model('large') },
  baseUrl: baseUrl<ProviderRead>({
    env: 'RESEARCH_BASE_URL',
    group: 'research',
    default: (loaded) => PROVIDER_BASE_URLS[loaded.research.provider],
    defaultText: "the vendor's public API",
    description:
      'API base: `…/v1` for OpenAI-compatible servers (`/chat/completions` is appended), the host for ' +
      'Anthropic (`/v1/messages` is appended). Set it for a proxy or a local server.',
  }),
  apiKey: optional({
    env: 'RESEARCH_API_KEY',
    group: 'research',
    secret: true,
    description: 'Sent as `Authorization: Bearer` (openai) or `x-api-key` (anthropic).',
  }),
  timeoutMs: durationMs({
    env: 'RESEARCH_TIMEOUT_MS',
    group: 'research',
    default: 30_000,
    min: 100,
    description: 'A provider call gives up after this long (504 `upstream_timeout`).',
  }),
  maxTokens: integer({
    env: 'RESEARCH_MAX_TOKENS',
    group: 'research',
    default: 600,
    min: 16,
    description: 'Longest answer asked of the provider.',
  }),
  indexDir: optional({
    env: 'RESEARCH_INDEX_DIR',
    group: 'research',
    accepts: 'a directory path',
    description:
      'Where this instance keeps its research index between starts (and, on PostgreSQL, its local copy ' +
      'of the passages), so a restart reads the index back instead of rebuilding it. Unset: the index ' +
      'file sits beside an embedded database (`<file>.research-index`); on PostgreSQL the copy lives in a ' +
      'temporary directory, no index file is kept, and every start rebuilds. Give each instance a ' +
      'directory of its own.',
  }),
  allowPrivateUrls: flag({
    env: 'CORPUS_ALLOW_PRIVATE_URLS',
    group: 'research',
    default: false,
    description:
      'Corpus URLs (`corpus add URL`, the review queue) may point at loopback, private and link-local ' +
      'addresses, e.g. an intranet wiki. Off: such a URL is refused before any connection, checked on ' +
      'the address actually connected to, so a DNS answer cannot swap it.',
  }),
  maxDocumentBytes: integer({
    env: 'CORPUS_MAX_BYTES',
    group: 'research',
    default: 50 * 1024 * 1024,
    min: 1024,
    unit: 'bytes, integer',
    description: 'Largest document fetched from a URL; a larger body is cut off and the document refused.',
  }),
};
