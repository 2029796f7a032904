// What `serve` writes as its log: one line per request (the server logs two, "incoming request" and
// "request completed": the first is held back and its method and path join the second), as JSON
// lines for a log collector, or as pino-pretty's human-readable lines on a terminal (LOG_FORMAT).
// pino-pretty runs in the process, synchronously, and is loaded only when it is used.
import { Writable } from 'node:stream';
import type { Config } from '../config.ts';

/** Requests begun and not yet answered whose start line is held back; beyond this, the oldest go. */
const HELD_BACK = 10_000;

interface Entry {
  msg?: string;
  reqId?: string;
  req?: unknown;
  res?: { statusCode?: number };
  responseTime?: number;
  [key: string]: unknown;
}

/** Pino's JSON lines in, one line per request out to `write`; other lines pass unchanged. */
export function oneLinePerRequest(write: (line: string) => void): Writable {
  const begun = new Map<string, unknown>();
  let rest = '';
  const take = (line: string) => {
    let entry: Entry;
    try {
      entry = JSON.parse(line);
    } catch {
      return write(`${line}\n`);
    }
    if (entry.msg === 'incoming request' && entry.reqId !== undefined) {
      begun.set(entry.reqId, entry.req);
      if (begun.size > HELD_BACK) begun.delete(begun.keys().next().value!);
      return;
    }
    if (entry.reqId !== undefined && begun.has(entry.reqId)) {
      const req = begun.get(entry.reqId);
      if (entry.msg === 'request completed') begun.delete(entry.reqId);
      if (entry.req === undefined) entry = { ...entry, req };
      return write(`${JSON.stringify(entry)}\n`);
    }
    write(`${line}\n`);
  };
  return new Writable({
    decodeStrings: false,
    write(chunk: Buffer | string, _encoding, done) {
      const lines = (rest + chunk.toString()).split('\n');
      rest = lines.pop()!;
      for (const line of lines) if (line !== '') take(line);
      done();
    },
  });
}

/** The request line as a person reads it: method, path, status and time. */
function messageOf(entry: Entry, messageKey: string): string {
  const req = entry.req as { method?: string; path?: string } | undefined;
  if (entry.msg === 'request completed' && req)
    return `${req.method} ${req.path} ${entry.res?.statusCode} ${Math.round(entry.responseTime ?? 0)} ms`;
  return String(entry[messageKey] ?? '');
}

export async function logStream(config: Config): Promise<NodeJS.WritableStream> {
  const pretty =
    config.logFormat === 'pretty' || (config.logFormat === 'auto' && process.stdout.isTTY === true);
  if (!pretty) return oneLinePerRequest((line) => process.stdout.write(line));
  const { default: pinoPretty } = await import('pino-pretty');
  const human = pinoPretty({
    sync: true,
    colorize: process.stdout.isTTY === true,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname,reqId,req,res,responseTime',
    messageFormat: (entry, messageKey) => messageOf(entry as Entry, messageKey),
  });
  return oneLinePerRequest((line) => human.write(line));
}
