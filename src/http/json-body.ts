import secureJson from 'secure-json-parse';

/**
 * The one rule for the keys of a JSON body, on REST (its operations and batches),
 * MCP and A2A alike: a `__proto__` key, or a `constructor` holding a `prototype`, is refused whole
 * with this message (docs/decisions.md, "JSON keys that reach a prototype"). Parsed as anything
 * else, such a key is dropped, or sets the prototype, by the first copy that assigns it.
 */
export const PROTOTYPE_KEYS_MESSAGE = 'JSON keys __proto__ and constructor.prototype are not accepted.';

const REFUSE_PROTOTYPE_KEYS = { protoAction: 'error', constructorAction: 'error' } as const;

export type JsonReading = { ok: true; value: unknown } | { ok: false; refused: 'syntax' | 'prototype_key' };

/** JSON text as every surface reads a body: parsed (a BOM skipped, as Fastify does), or why not. */
export function readJson(text: string): JsonReading {
  try {
    return { ok: true, value: secureJson.parse(text, undefined, REFUSE_PROTOTYPE_KEYS) };
  } catch {
    return { ok: false, refused: parsesAsJson(text) ? 'prototype_key' : 'syntax' };
  }
}

/** Only on a refusal: whether the text was JSON after all, so a prototype key was the reason. */
function parsesAsJson(text: string): boolean {
  try {
    JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    return true;
  } catch {
    return false;
  }
}
