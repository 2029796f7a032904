import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../src/config.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { addSmallCorpus } from './support/research-corpus.ts';

const ASK = '/api/research/ask';

interface Seen {
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
}

/** A local server speaking a provider's protocol; each test sets how it answers. */
async function fakeProvider(): Promise<{
  url: string;
  server: Server;
  seen: Seen[];
  answer: (handler: (res: ServerResponse, body: any) => void) => void;
}> {
  const seen: Seen[] = [];
  let handler: (res: ServerResponse, body: any) => void = (res) => res.end();
  const server = createServer((request, response) => {
    let raw = '';
    request.on('data', (chunk) => {
      raw += chunk;
    });
    request.on('end', () => {
      const body = JSON.parse(raw);
      seen.push({ path: request.url ?? '', headers: request.headers, body });
      handler(response, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { url: `http://127.0.0.1:${port}`, server, seen, answer: (h) => (handler = h) };
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

const PROTOCOLS = [
  {
    provider: 'openai',
    path: '/v1/chat/completions',
    base: (url: string) => `${url}/v1`,
    reply: (text: string) => ({
      choices: [{ message: { role: 'assistant', content: text } }],
      usage: { prompt_tokens: 120, completion_tokens: 30 },
    }),
    auth: (headers: IncomingMessage['headers']) => headers.authorization === 'Bearer sk-test',
    question: (body: any) => body.messages[1].content as string,
  },
  {
    provider: 'anthropic',
    path: '/v1/messages',
    base: (url: string) => url,
    reply: (text: string) => ({
      content: [{ type: 'text', text }],
      usage: { input_tokens: 120, output_tokens: 30 },
    }),
    auth: (headers: IncomingMessage['headers']) =>
      headers['x-api-key'] === 'sk-test' && headers['anthropic-version'] === '2023-06-01',
    question: (body: any) => body.messages[0].content as string,
  },
] as const;

for (const protocol of PROTOCOLS) {
  describe(`research synthesis through the ${protocol.provider} protocol`, () => {
    let t: TestApp;
    let token: string;
    let fake: Awaited<ReturnType<typeof fakeProvider>>;
    before(async () => {
      fake = await fakeProvider();
      const research = loadConfig({
        RESEARCH_PROVIDER: protocol.provider,
        RESEARCH_BASE_URL: protocol.base(fake.url),
        RESEARCH_API_KEY: 'sk-test',
        RESEARCH_MODEL_SMALL: 'vendor-mini-1',
        RESEARCH_MODEL_MEDIUM: 'vendor-mid-1',
        RESEARCH_MODEL_LARGE: 'vendor-max-1',
        RESEARCH_TIMEOUT_MS: '300',
      }).research;
      t = await startTestApp({ config: { research } });
      await addSmallCorpus(t.deps);
      token = await t.token(await t.member('resident'), ['research:query']);
    });
    after(async () => {
      await t?.close();
      fake?.server.close();
    });

    const ask = (body: unknown) => t.call('POST', ASK, { token, body });

    test('the answer, its citations and usage come from the provider; streaming off', async () => {
      fake.answer((res) =>
        json(
          res,
          200,
          protocol.reply('Bees dance the direction [1] and the run length gives distance [2]. Ignored [9].'),
        ),
      );
      const response = await ask({ q: 'waggle run distance', synthesize: true, model: 'vendor-mid-1', k: 2 });
      assert.equal(response.status, 200);
      const last = fake.seen.at(-1)!;
      assert.equal(last.path, protocol.path);
      assert.ok(protocol.auth(last.headers), 'credentials sent the provider’s way');
      assert.deepEqual([last.body.model, last.body.stream], ['vendor-mid-1', false]);
      assert.match(protocol.question(last.body), /\[1\] Honeybee navigation — (The waggle dance|Distance)\n/);
      assert.match(protocol.question(last.body), /Question: waggle run distance$/);
      const ids = response.body.results.map((r: { id: string }) => r.id);
      assert.deepEqual(response.body, {
        q: 'waggle run distance',
        k: 2,
        model: 'medium',
        answer: 'Bees dance the direction [1] and the run length gives distance [2]. Ignored [9].',
        citations: [
          {
            n: 1,
            id: ids[0],
            title: 'Honeybee navigation',
            section: response.body.results[0].section,
            url: null,
          },
          {
            n: 2,
            id: ids[1],
            title: 'Honeybee navigation',
            section: response.body.results[1].section,
            url: null,
          },
        ],
        results: response.body.results,
        usage: { input_tokens: 120, output_tokens: 30 },
        answered_by: protocol.provider,
        via: 'agent',
      });
    });

    test('provider errors are 502, overload 503, timeouts 504, in the Error shape', async () => {
      const cases: [(res: ServerResponse) => void, number, string][] = [
        [(res) => json(res, 500, { error: { message: 'boom' } }), 502, 'upstream_error'],
        [(res) => json(res, 401, { error: { message: 'bad key' } }), 502, 'upstream_error'],
        [(res) => json(res, 200, { unexpected: true }), 502, 'upstream_error'],
        [(res) => json(res, 429, { error: 'rate' }, { 'retry-after': '7' }), 503, 'upstream_overloaded'],
        [
          (res) => json(res, 529, { type: 'error', error: { type: 'overloaded_error' } }),
          503,
          'upstream_overloaded',
        ],
        [
          (res) => setTimeout(() => json(res, 200, protocol.reply('late [1]')), 1000),
          504,
          'upstream_timeout',
        ],
      ];
      for (const [handler, status, code] of cases) {
        fake.answer(handler);
        const response = await ask({ q: 'spring tides', synthesize: true });
        assert.equal(response.status, status, code);
        assert.equal(response.body.error, code);
        assert.equal(response.body.error_kind, 'upstream');
        assert.equal(typeof response.body.message, 'string');
        assert.ok(!response.text.includes('spring tides'), 'the error never echoes the question');
      }
      fake.answer((res) => json(res, 503, {}, { 'retry-after': '7' }));
      const overloaded = await ask({ q: 'tides', synthesize: true });
      assert.equal(overloaded.headers.get('retry-after'), '7');
      const plain = await ask({ q: 'spring tides' });
      assert.equal(plain.status, 200, 'retrieval alone never calls the provider');
    });
  });
}
