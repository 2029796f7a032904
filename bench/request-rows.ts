// The requests the per-request benches load, declared once: the service's bearer read, anonymous
// events list, the same list as an MCP tools/call at each revision and as an A2A tasks/send, and a
// durable highlight write; and their floors, node:http (bench/hello-server.mjs) and Fastify
// (bench/fastify-floor.mjs) sending the same answers with no work. bench/instructions.ts counts
// them under callgrind; bench/rows-beside-floors.ts times them under wrk.
import { highlightStory, mcpModernToolCall, mcpToolCall } from './support.ts';

export type FloorServer = 'hello' | 'fastify';

export interface RequestRow {
  label: string;
  url: string;
  headers: Record<string, string>;
  /** A POST's Lua script for wrk, made afresh for each load (its number makes its ids unique). */
  script?: (load: number) => string;
}

export interface FloorRow extends RequestRow {
  server: FloorServer;
}

export interface ServiceRow extends RequestRow {
  /** node:http sending this row's answer, where a floor sends it. */
  floor?: FloorRow;
  /** Fastify sending this row's answer, where a floor sends it: what lies above it is ours. */
  fastifyFloor?: FloorRow;
}

/** A Lua string literal (the bodies here are ASCII). */
export const lua = (text: string) => JSON.stringify(text);

/** wrk's Lua for a POST of one body, again and again. */
const postOf = (body: string) => (): string => ['wrk.method = "POST"', `wrk.body = ${lua(body)}`].join('\n');

/** wrk's Lua for highlight writes, each a story of its own (a fresh id: a durable insert, not a replay). */
const highlightWrites = (load: number): string => {
  const [before, after] = highlightStory('ID').split('"ID"');
  return [
    'wrk.method = "POST"',
    'local n = 0',
    'request = function()',
    '  n = n + 1',
    `  return wrk.format(nil, nil, nil, ${lua(`${before}"bench-${process.pid}-${load}-`)} .. n .. ${lua(`"${after}`)})`,
    'end',
  ].join('\n');
};

const floorOf = (label: string, server: FloorServer, url: string): FloorRow => ({
  label,
  server,
  url,
  headers: {},
});

export const FLOORS = {
  hello: floorOf('node:http hello', 'hello', '/'),
  bearer: floorOf('node:http floor of the bearer read', 'hello', '/setup-check'),
  events: floorOf('node:http floor of the events list', 'hello', '/upcoming'),
  fastifyHello: floorOf('Fastify hello', 'fastify', '/'),
  fastifyBearer: floorOf('Fastify floor of the bearer read', 'fastify', '/setup-check'),
  fastifyEvents: floorOf('Fastify floor of the events list', 'fastify', '/upcoming'),
};

/** The service's rows, for a token that reads (`read:public,membership:read`) and one that submits recaps. */
export function serviceRows(readerToken: string, writerToken: string): ServiceRow[] {
  const mcp = mcpToolCall('/api/mcp', 'ic_events_list_upcoming', {});
  const mcpModern = mcpModernToolCall('/api/mcp', 'ic_events_list_upcoming', {});
  const a2aBody = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tasks/send',
    params: { capability: 'ic_events_list_upcoming', arguments: {} },
  });
  return [
    {
      label: 'bearer read (setup-check)',
      url: '/api/agent/setup-check',
      headers: { authorization: `Bearer ${readerToken}` },
      floor: FLOORS.bearer,
      fastifyFloor: FLOORS.fastifyBearer,
    },
    {
      label: 'anonymous events list',
      url: '/api/events/upcoming',
      headers: {},
      floor: FLOORS.events,
      fastifyFloor: FLOORS.fastifyEvents,
    },
    { label: 'MCP tools/call events list', url: mcp.url, headers: mcp.headers, script: postOf(mcp.body) },
    {
      label: 'MCP 2026-07-28 tools/call events list',
      url: mcpModern.url,
      headers: mcpModern.headers,
      script: postOf(mcpModern.body),
    },
    {
      label: 'A2A tasks/send events list',
      url: '/api/a2a',
      headers: { 'content-type': 'application/json' },
      script: postOf(a2aBody),
    },
    {
      label: 'durable highlight write (SQLite)',
      url: '/api/ingest/highlights/pending',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${writerToken}` },
      script: highlightWrites,
    },
  ];
}
