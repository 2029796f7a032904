import type { Operation } from '../operations/types.ts';
import { mcpCurlExample, mcpToolCallBody, shellQuote } from './mcp-example.ts';
import { agentInputSchema } from './openapi.ts';

/**
 * Ready-to-paste calls of an operation on each surface it is served on, built from its registry
 * declaration alone: the path, the method, the credential it needs and an input made of the input
 * schema's declared examples and required fields. The reference page prints them and
 * test/reference-examples.test.ts validates every input and runs some of the commands.
 */

interface JsonSchema {
  type?: string | string[];
  examples?: unknown[];
  const?: unknown;
  enum?: unknown[];
  default?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  format?: string;
  minimum?: number;
  exclusiveMinimum?: number;
  multipleOf?: number;
  items?: JsonSchema;
  minItems?: number;
  properties?: Record<string, JsonSchema>;
  required?: string[];
}

/** What stands for the member's agent token in every example (as llms.txt and the docs write it). */
export const TOKEN_PLACEHOLDER = 'agt_…';
/** What stands for the browser session cookie's value. */
export const SESSION_PLACEHOLDER = '…';

/** A value the field accepts: its declared example first, else one made from its type and bounds. */
function valueFor(schema: JsonSchema, name: string): unknown {
  if (schema.examples?.length) return schema.examples[0];
  if (schema.const !== undefined) return schema.const;
  if (schema.enum?.length) return schema.enum[0];
  if (schema.default !== undefined) return schema.default;
  const branch = (schema.anyOf ?? schema.oneOf)?.find((option) => option.type !== 'null');
  if (branch) return valueFor(branch, name);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'string':
      if (schema.format === 'email' || /email/.test(name)) return 'member@example.org';
      if (schema.format === 'date-time')
        return /^end/.test(name) ? '2027-01-15T11:00:00Z' : '2027-01-15T10:00:00Z';
      if (schema.format === 'uri' || /url$/.test(name)) return 'https://example.org/events/1';
      return `<${name}>`;
    case 'integer':
    case 'number':
      if (schema.minimum !== undefined) return schema.minimum;
      if (schema.exclusiveMinimum !== undefined) return schema.exclusiveMinimum + (schema.multipleOf ?? 1);
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => valueFor(schema.items ?? {}, name));
    case 'object':
      return objectFor(schema);
    default:
      return `<${name}>`;
  }
}

/** The required fields, and the optional ones with a declared example, of an object schema. */
function objectFor(schema: JsonSchema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const required = new Set(schema.required ?? []);
  for (const [name, field] of Object.entries(schema.properties ?? {}))
    if (required.has(name) || field.examples?.length) out[name] = valueFor(field, name);
  return out;
}

const examples = new WeakMap<Operation, Readonly<Record<string, unknown>>>();

/** The example input of an operation, as an agent must send it (agent-only required fields included). */
export function exampleInput(op: Operation): Readonly<Record<string, unknown>> {
  let input = examples.get(op);
  if (!input) {
    input = objectFor(agentInputSchema(op) as JsonSchema);
    examples.set(op, input);
  }
  return input;
}

function queryOf(input: Readonly<Record<string, unknown>>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(input))
    for (const item of Array.isArray(value) ? value : [value]) params.append(name, String(item));
  // A placeholder (`<slug>`) stays readable: it is there to be replaced before the call is sent.
  const text = params.toString().replace(/%3C/g, '<').replace(/%3E/g, '>');
  return text ? `?${text}` : '';
}

/** Which credential the example sends: what the operation needs, read the way an agent calls it. */
function credentialHeader(op: Operation): string | undefined {
  if (op.credential === 'bearer' || op.credential === 'bearer_or_session')
    return `-H ${shellQuote(`Authorization: Bearer ${TOKEN_PLACEHOLDER}`)}`;
  if (op.credential === 'session') return `-b ${shellQuote(`__session=${SESSION_PLACEHOLDER}`)}`;
  return undefined;
}

/** The REST call as one curl command line. */
export function restCurlExample(base: string, op: Operation & { path: string }): string {
  const input = exampleInput(op);
  const query = op.inputFrom === 'query' ? queryOf(input) : '';
  const url = `${base}${op.path}${query}`;
  const words = ['curl -sS'];
  if (op.method !== 'GET') words.push(`-X ${op.method}`);
  words.push(query ? shellQuote(url) : url);
  const credential = credentialHeader(op);
  if (credential) words.push(credential);
  if (op.inputFrom === 'body') {
    words.push(`-H ${shellQuote('Content-Type: application/json')}`);
    words.push(`-d ${shellQuote(JSON.stringify(input))}`);
  }
  return words.join(' ');
}

/** Whether a tools/call or an A2A call of the operation needs the agent token (MCP has no session). */
function toolNeedsToken(op: Operation): boolean {
  return op.credential !== 'public' && op.credential !== 'optional_bearer';
}

/** The tools/call JSON-RPC body and the curl command that sends it. */
export function mcpExamples(base: string, op: Operation & { mcpTool: string }) {
  const body = mcpToolCallBody(op.mcpTool, exampleInput(op));
  return { body, curl: mcpCurlExample(base, body, toolNeedsToken(op) ? TOKEN_PLACEHOLDER : undefined) };
}

/** The A2A 1.0 SendMessage JSON-RPC body (a data part naming the skill) and the curl command. */
export function a2aExamples(base: string, op: Operation & { mcpTool: string }) {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'SendMessage',
    params: {
      message: {
        messageId: 'msg-1',
        role: 'ROLE_USER',
        parts: [{ data: { capability: op.mcpTool, arguments: exampleInput(op) } }],
      },
    },
  });
  const words = [
    `curl -sS -X POST ${base}/api/a2a`,
    `-H ${shellQuote('Content-Type: application/json')}`,
    `-H ${shellQuote('A2A-Version: 1.0')}`,
  ];
  if (toolNeedsToken(op)) words.push(`-H ${shellQuote(`Authorization: Bearer ${TOKEN_PLACEHOLDER}`)}`);
  words.push(`-d ${shellQuote(body)}`);
  return { body, curl: words.join(' ') };
}
