import { PROTOTYPE_KEYS_MESSAGE, readJson } from '../http/json-body.ts';
import { toJsonSchema } from '../operations/schemas.ts';
import type { Operation } from '../operations/types.ts';
import { type Capability, capabilitiesOf } from './a2a-card.ts';

/** A skill call read from a message: the skill's name and its arguments. */
export interface SkillCall {
  capability: unknown;
  arguments?: unknown;
  idempotency_key?: unknown;
}

export type TextReading =
  | { call: SkillCall }
  | { help: { text: string; data: unknown } }
  /** The text's JSON broke the rule every body follows (src/http/json-body.ts): refused, not run. */
  | { refused: string };

/** JSON in a text part, read by the same rule as a body; 'prototype_key' when that rule refuses it. */
function parseObject(text: string): Record<string, unknown> | undefined | 'prototype_key' {
  const reading = readJson(text);
  if (!reading.ok) return reading.refused === 'prototype_key' ? 'prototype_key' : undefined;
  const value = reading.value;
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

const EXAMPLE_CALL = { capability: 'ic_signal_get_latest', arguments: {} };

function skillLine(op: Capability): string {
  const needs = op.credential === 'public' || op.credential === 'optional_bearer' ? 'no token' : 'bearer';
  return `- ${op.mcpTool}: ${op.summary} (${needs}${op.scope ? `, scope ${op.scope}` : ''})`;
}

/** The reply to a text this agent cannot act on: what it can do, and the two forms that call a skill. */
function help(operations: readonly Operation[], reason: string, skill?: Capability) {
  const capabilities = capabilitiesOf(operations);
  const lines = [
    reason,
    '',
    'Call a skill with a data part {"capability": "<skill id>", "arguments": {…}}, or with a text part',
    'holding that JSON, or the skill id followed by its arguments as JSON, e.g.',
    `  ${EXAMPLE_CALL.capability} {}`,
  ];
  if (skill) {
    lines.push('', `${skill.mcpTool} takes: ${JSON.stringify(toJsonSchema(skill.input))}`);
  } else {
    lines.push('', 'Skills:', ...capabilities.map(skillLine));
  }
  return {
    text: lines.join('\n'),
    data: {
      data_part_form: { capability: '<skill id>', arguments: {} },
      example: EXAMPLE_CALL,
      skills: (skill ? [skill] : capabilities).map((op) => ({
        id: op.mcpTool,
        name: op.summary,
        credential: op.credential,
        scope: op.scope ?? null,
        ...(skill ? { input_schema: toJsonSchema(op.input) } : {}),
      })),
    },
  };
}

/**
 * Reads a message that has only text: a skill call when the text is the data-part JSON, or names a
 * skill and then carries its arguments as JSON (or nothing, for none); otherwise help.
 */
export function readText(operations: readonly Operation[], texts: string[]): TextReading {
  const text = texts.join('\n').trim();
  const whole = parseObject(text);
  if (whole === 'prototype_key') return { refused: PROTOTYPE_KEYS_MESSAGE };
  if (whole && typeof whole.capability === 'string') return { call: whole as unknown as SkillCall };
  const match = /^(\S+)\s*([\s\S]*)$/.exec(text);
  const skill = match && capabilitiesOf(operations).find((op) => op.mcpTool === match[1]);
  if (!match || !skill) {
    return { help: help(operations, text ? 'No skill is named in this message.' : 'The message is empty.') };
  }
  if (match[2] === '') return { call: { capability: skill.mcpTool, arguments: {} } };
  const args = parseObject(match[2]);
  if (args === 'prototype_key') return { refused: PROTOTYPE_KEYS_MESSAGE };
  if (args) return { call: { capability: skill.mcpTool, arguments: args } };
  return { help: help(operations, `The arguments after ${skill.mcpTool} must be a JSON object.`, skill) };
}
