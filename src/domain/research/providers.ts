import type { ResearchConfig } from '../../config.ts';
import { apiError } from '../../core/errors.ts';
import { type OutboundError, outboundFetch } from '../../outbound.ts';

/** Tokens a provider call spent, as the provider reports them. */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
}

export interface ProviderReply {
  text: string;
  usage: Usage;
}

export const SYSTEM_PROMPT =
  'You answer research questions using only the numbered passages you are given. Cite every claim with the passage number in square brackets, like [2]. If the passages do not answer the question, say so. Do not use outside knowledge.';

function userMessage(query: string, passages: string): string {
  return `Passages:\n\n${passages}\n\nQuestion: ${query}`;
}

// Messages never include the question or the provider's reply: either may echo the query text.
const upstreamError = () => apiError('upstream_error');
const upstreamOverloaded = (retryAfter?: string | null) =>
  apiError('upstream_overloaded', {
    retryAfterSeconds: retryAfter && /^\d+$/.test(retryAfter) ? Number(retryAfter) : undefined,
  });
const upstreamTimeout = (ms: number) => apiError('upstream_timeout', { ms });

interface WireRequest {
  url: string;
  headers: Record<string, string>;
  body: unknown;
}

/** A completion this large is no answer to a research question. */
const MAX_ANSWER_BYTES = 2 * 1024 * 1024;

/** One non-streaming call; provider failures become 502, overload 503 and timeouts 504. */
async function post(config: ResearchConfig, request: WireRequest): Promise<unknown> {
  let response: Response;
  try {
    response = await outboundFetch(
      request.url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...request.headers },
        body: JSON.stringify(request.body),
      },
      { timeoutMs: config.timeoutMs, maxBytes: MAX_ANSWER_BYTES },
    );
  } catch (error) {
    if ((error as OutboundError).kind === 'timeout') throw upstreamTimeout(config.timeoutMs);
    throw upstreamError();
  }
  let payload: unknown;
  try {
    payload = await response.json();
  } catch (error) {
    if ((error as Error).name === 'TimeoutError') throw upstreamTimeout(config.timeoutMs);
    payload = undefined;
  }
  // 529 is Anthropic's "overloaded"; 429 and 503 are everyone's.
  if (response.status === 429 || response.status === 503 || response.status === 529)
    throw upstreamOverloaded(response.headers.get('retry-after'));
  if (response.status === 504 || response.status === 408) throw upstreamTimeout(config.timeoutMs);
  if (!response.ok || payload === undefined) throw upstreamError();
  return payload;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/** OpenAI-compatible chat completions (`POST {base}/chat/completions`). */
async function openAi(
  config: ResearchConfig,
  model: string,
  query: string,
  passages: string,
): Promise<ProviderReply> {
  const payload = (await post(config, {
    url: `${config.baseUrl}/chat/completions`,
    headers: config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {},
    body: {
      model,
      stream: false,
      temperature: 0,
      max_tokens: config.maxTokens,
      messages: [
        { role: 'system', content: SYSTEM_PROMPT },
        { role: 'user', content: userMessage(query, passages) },
      ],
    },
  })) as { choices?: { message?: { content?: unknown } }[]; usage?: Record<string, unknown> };
  const text = payload?.choices?.[0]?.message?.content;
  if (typeof text !== 'string') throw upstreamError();
  return {
    text,
    usage: {
      input_tokens: count(payload.usage?.prompt_tokens),
      output_tokens: count(payload.usage?.completion_tokens),
    },
  };
}

/** Anthropic messages API (`POST {base}/v1/messages`). */
async function anthropic(
  config: ResearchConfig,
  model: string,
  query: string,
  passages: string,
): Promise<ProviderReply> {
  const payload = (await post(config, {
    url: `${config.baseUrl}/v1/messages`,
    headers: { 'anthropic-version': '2023-06-01', ...(config.apiKey ? { 'x-api-key': config.apiKey } : {}) },
    body: {
      model,
      stream: false,
      max_tokens: config.maxTokens,
      system: SYSTEM_PROMPT,
      messages: [{ role: 'user', content: userMessage(query, passages) }],
    },
  })) as { content?: { type?: string; text?: unknown }[]; usage?: Record<string, unknown> };
  const parts = Array.isArray(payload?.content) ? payload.content.filter((c) => c.type === 'text') : [];
  if (parts.length === 0 || parts.some((p) => typeof p.text !== 'string')) throw upstreamError();
  return {
    text: parts.map((p) => p.text as string).join(''),
    usage: {
      input_tokens: count(payload.usage?.input_tokens),
      output_tokens: count(payload.usage?.output_tokens),
    },
  };
}

export function callProvider(
  config: ResearchConfig,
  model: string,
  query: string,
  passages: string,
): Promise<ProviderReply> {
  return config.provider === 'anthropic'
    ? anthropic(config, model, query, passages)
    : openAi(config, model, query, passages);
}
