// A worker thread that holds `slots` connections to 127.0.0.1:`port` from 127.0.0.1 for
// `durationMs`, each a feedback POST trickled one byte per `trickleEveryMs` (every other one its
// head, the rest their body), opening the next `reopenAfterMs` after one closes. It runs beside the
// test's own requests, not on their event loop, and posts what became of every connection.
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { parentPort, workerData } from 'node:worker_threads';

export interface AttackPlan {
  port: number;
  slots: number;
  durationMs: number;
  reopenAfterMs: number;
  trickleEveryMs: number;
  /** A connection the server has not closed by then is closed here, and counted as `abandoned`. */
  giveUpAfterMs: number;
}

export interface AttackOutcome {
  /** How each connection ended: from connect to close, and the first line the server wrote. */
  ended: { openMs: number; statusLine?: string; abandoned: boolean }[];
  /** Sampled every 50 ms: connections open 200 ms or more, i.e. taken by the server. */
  held: number[];
}

const plan = workerData as AttackPlan;
const HEAD =
  'POST /api/agent/feedback HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
  'Content-Length: 4000\r\n\r\n';
const open = new Map<Socket, number>();
const outcome: AttackOutcome = { ended: [], held: [] };

function slowRequest(slowHead: boolean): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port: plan.port, localAddress: '127.0.0.1' });
    let connectedAt = Date.now();
    let received = '';
    let sent = 0;
    let trickle: NodeJS.Timeout | undefined;
    let abandoned = false;
    const giveUp = setTimeout(() => {
      abandoned = true;
      socket.destroy();
    }, plan.giveUpAfterMs);
    socket.setEncoding('utf8');
    socket.on('connect', () => {
      connectedAt = Date.now();
      open.set(socket, connectedAt);
      if (!slowHead) socket.write(HEAD);
      trickle = setInterval(() => {
        if (socket.writable) socket.write(slowHead ? HEAD[sent++ % HEAD.length] : ' ');
      }, plan.trickleEveryMs);
    });
    socket.on('data', (chunk: string) => {
      received += chunk;
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      open.delete(socket);
      clearInterval(trickle);
      clearTimeout(giveUp);
      const statusLine = received.split('\r\n')[0] || undefined;
      outcome.ended.push({ openMs: Date.now() - connectedAt, statusLine, abandoned });
      resolve();
    });
  });
}

const deadline = Date.now() + plan.durationMs;
const sampler = setInterval(() => {
  const now = Date.now();
  outcome.held.push([...open.values()].filter((connectedAt) => now - connectedAt >= 200).length);
}, 50);
await Promise.all(
  Array.from({ length: plan.slots }, async (_, index) => {
    while (Date.now() < deadline) {
      await slowRequest(index % 2 === 1);
      await sleep(plan.reopenAfterMs);
    }
  }),
);
clearInterval(sampler);
parentPort?.postMessage(outcome);
