// The development outbox's address on a local server: the same after a restart on the same database,
// and printed again on demand by `agent-commons outbox`.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { freePort } from './support/app.ts';
import { freshDatabase } from './support/databases.ts';
import { killAllChildren, runCli, startServer } from './support/processes.ts';

const database = await freshDatabase('sqlite');
after(async () => {
  await killAllChildren();
  await database.drop();
});

function outboxAddress(stdout: string): string {
  const address = /readable on this machine at (\S+);/.exec(stdout)?.[1];
  assert.ok(address, `no outbox address in: ${stdout}`);
  return address;
}

test('the outbox key survives a restart, and `agent-commons outbox` prints the address again', async () => {
  const port = await freePort();
  const env = { SEED_DEMO: 'false' };
  const first = await startServer(database.url, { port, env });
  const address = outboxAddress(first.stdout());
  assert.equal((await first.kill('SIGTERM')).code, 0);

  const second = await startServer(database.url, { port, env });
  try {
    assert.equal(outboxAddress(second.stdout()), address, 'the same address after a restart');
    const opened = await fetch(address);
    assert.equal(opened.status, 200, 'the address opens the outbox');

    const printed = await runCli(database.url, ['outbox'], {
      env: { PORT: String(port), HOST: '127.0.0.1' },
    });
    assert.equal(printed.code, 0, printed.stderr);
    assert.equal(printed.stdout, `${address}\n`);
  } finally {
    await second.kill('SIGTERM');
  }

  const mailed = await runCli(database.url, ['outbox'], { env: { SMTP_URL: 'smtp://127.0.0.1:2525' } });
  assert.equal(mailed.code, 1);
  assert.equal(mailed.stderr, 'error: no development outbox: sign-in links are mailed through SMTP_URL\n');
});
