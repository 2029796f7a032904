// `npm start` under a supervisor: the supervisor signals npm, not the server. The start script execs
// the server in place of npm's shell, so the SIGTERM npm forwards reaches the server itself: it
// drains, exits 0, and npm leaves with it; no server is left running without a parent.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, test } from 'node:test';
import { freePort } from './support/app.ts';
import { freshDatabase } from './support/databases.ts';
import { childEnv, ROOT } from './support/processes.ts';

const database = await freshDatabase('sqlite');
after(() => database.drop());

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('SIGTERM to the npm process of `npm start` drains the server and ends both', async () => {
  const port = await freePort();
  const npm = spawn('npm', ['start', '--silent'], {
    cwd: ROOT,
    env: childEnv(database.url, {
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      SEED_DEMO: 'false',
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  npm.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  npm.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
  let serverPid: number | undefined;
  try {
    const deadline = Date.now() + 45_000;
    while (serverPid === undefined) {
      assert.ok(Date.now() < deadline, `the server did not start: ${output}`);
      const listening = output.split('\n').find((line) => line.includes('Server listening at'));
      if (listening) serverPid = JSON.parse(listening).pid as number;
      else await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    assert.equal(health.status, 200);
    assert.notEqual(serverPid, npm.pid, 'npm itself is not the server');

    npm.kill('SIGTERM');
    const code = await exited;
    assert.match(output, /draining/, 'the server received the signal and drained');
    assert.equal(code, 0, `npm exits with the server's code 0: ${output}`);
    for (let i = 0; i < 50 && alive(serverPid); i++) await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(alive(serverPid), false, 'no server is left running after npm exited');
  } finally {
    if (serverPid !== undefined && alive(serverPid)) process.kill(serverPid, 'SIGKILL');
    if (npm.exitCode === null) npm.kill('SIGKILL');
  }
});
