import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { sql } from 'kysely';
import { a2aClient } from './support/a2a.ts';
import { startTestApp, type TestApp } from './support/app.ts';
import { engines } from './support/databases.ts';
import { addSmallCorpus } from './support/research-corpus.ts';

/** A word no corpus passage holds, so only an echo of the question could put it anywhere. */
const MARKER = 'quizzicalwombat4417';
const QUESTION = `fresnel lens ${MARKER}`;

/** Every row of every table, as text: what a copy of the database would show. */
async function everyRow(t: TestApp): Promise<Map<string, string>> {
  const tables = await t.deps.db.introspection.getTables();
  const rows = new Map<string, string>();
  for (const table of tables) {
    const { rows: found } = await sql`select * from ${sql.table(table.name)}`.execute(t.deps.db);
    rows.set(table.name, JSON.stringify(found));
  }
  return rows;
}

for (const engine of engines) {
  describe(`research questions are kept nowhere, on any surface (${engine.name})`, {
    skip: engine.skip,
  }, () => {
    let t: TestApp;
    let token: string;
    const logLines: string[] = [];
    before(async () => {
      const logStream = new Writable({
        write(chunk, _encoding, done) {
          logLines.push(String(chunk));
          done();
        },
      });
      t = await startTestApp({ engine: engine.name, limits: { researchPerHour: 1000 }, logStream });
      await addSmallCorpus(t.deps);
      token = await t.token(await t.member('resident'), ['research:query']);
    });
    after(() => t?.close());

    const v1 = a2aClient(() => t, { 'a2a-version': '1.0' });
    const legacy = a2aClient(() => t, { 'a2a-version': '0.3' });
    const ask = { q: QUESTION, synthesize: true };

    async function sendMessage(parts: unknown[]) {
      const sent = await v1.rpc(
        'SendMessage',
        { message: { messageId: randomUUID(), role: 'ROLE_USER', parts } },
        token,
      );
      assert.equal(sent.body.result?.task?.status.state, 'TASK_STATE_COMPLETED', sent.text);
      return sent.body.result.task;
    }

    test('REST, MCP and A2A answer with the question, and store and log none of it', async () => {
      const rest = await t.call('POST', '/api/research/ask', { token, body: ask });
      assert.equal(rest.status, 200, rest.text);
      assert.equal(rest.body.q, QUESTION, 'the answer itself echoes the question');
      assert.equal((await t.call('POST', '/api/research/ask', { token, body: { q: QUESTION } })).status, 200);

      const mcp = await fetch(`${t.baseUrl}/api/mcp`, {
        method: 'POST',
        headers: {
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
          'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
          authorization: `Bearer ${token}`,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'ic_research_ask', arguments: ask },
        }),
      });
      const mcpText = await mcp.text();
      assert.equal(mcp.status, 200, mcpText);
      assert.ok(mcpText.includes(MARKER), 'the MCP answer carries the question');

      const byData = await sendMessage([{ data: { capability: 'ic_research_ask', arguments: ask } }]);
      assert.equal(byData.artifacts[0].parts[0].data.q, QUESTION, 'the reply to the message has the answer');
      const byText = await sendMessage([{ text: `ic_research_ask ${JSON.stringify(ask)}` }]);
      assert.equal(byText.artifacts[0].parts[0].data.q, QUESTION);
      const old = await legacy.rpc(
        'message/send',
        {
          message: {
            kind: 'message',
            messageId: randomUUID(),
            role: 'user',
            parts: [{ kind: 'data', data: { capability: 'ic_research_ask', arguments: ask } }],
          },
        },
        token,
      );
      assert.equal(old.body.result?.status?.state, 'completed', old.text);
      const reference = await legacy.send('ic_research_ask', ask, token);
      assert.equal(reference.body.result?.q, QUESTION, reference.text);

      for (const [table, text] of await everyRow(t))
        assert.ok(!text.includes(MARKER), `no row of ${table} holds the question`);
      if (engine.name === 'sqlite') {
        const file = t.database.url.slice('sqlite:'.length);
        for (const path of [file, `${file}-wal`].filter(existsSync))
          assert.ok(!readFileSync(path).includes(MARKER), `${path} holds no byte of the question`);
      }
      assert.ok(logLines.length > 0, 'the log was captured');
      assert.ok(!logLines.join('').includes(MARKER), 'no log line carries the question');
    });

    test('the kept task says its answer is not kept, in either version, and lists without an artifact', async () => {
      const task = await sendMessage([{ data: { capability: 'ic_research_ask', arguments: ask } }]);
      const read = await v1.rpc('GetTask', { id: task.id }, token);
      assert.equal(read.body.result.status.state, 'TASK_STATE_COMPLETED', read.text);
      assert.equal(read.body.result.artifacts, undefined, 'no artifact: the answer was not kept');
      assert.match(read.body.result.status.message.parts[0].text, /not kept/);
      assert.equal(read.body.result.metadata.capability, 'ic_research_ask');
      const old = await legacy.rpc('tasks/get', { id: task.id }, token);
      assert.equal(old.body.result.status.state, 'completed', old.text);
      assert.equal(old.body.result.status.message.parts[0].kind, 'text');
      const listed = await v1.rpc('ListTasks', { includeArtifacts: true }, token);
      const entry = listed.body.result.tasks.find((listedTask: { id: string }) => listedTask.id === task.id);
      assert.equal(entry.artifacts, undefined);
      const stored = await t.deps.db
        .selectFrom('a2a_tasks')
        .select('result')
        .where('id', '=', task.id)
        .executeTakeFirstOrThrow();
      assert.equal(stored.result, 'null');
    });
  });
}
