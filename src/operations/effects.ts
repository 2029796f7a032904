import type { Operation } from './types.ts';

/** What a call does to the world: the facts every catalog (MCP tools, A2A skills, OpenAPI) states alike. */
export interface Effects {
  title: string;
  readOnly: boolean;
  /** Meaningful for a write only: it may overwrite or remove what exists (a decision, a revocation). */
  destructive: boolean;
  /** Calling again with the same input has no further effect. */
  idempotent: boolean;
  /** The call reaches beyond this service (a language-model provider, the code host). */
  openWorld: boolean;
}

/**
 * From the operation's declaration: `effect` when it declares one; otherwise a GET reads, an
 * MCP-only operation that a sandbox token runs for real reads (a write a sandbox token could run
 * for real would be no sandbox), and anything else adds.
 */
export function effectsOf(op: Operation): Effects {
  const effect =
    op.effect ??
    (op.method === 'GET' || (op.path === undefined && op.sandbox === 'real')
      ? 'read'
      : op.method === 'DELETE'
        ? 'destructive'
        : 'additive');
  const readOnly = effect === 'read';
  return {
    title: op.summary,
    readOnly,
    destructive: effect === 'destructive',
    idempotent: readOnly || op.method === 'DELETE' || op.repeatable === true,
    openWorld: op.openWorld === true,
  };
}

/** The MCP tool annotations (2025-06-18 and later) of an operation. */
export function toolAnnotations(op: Operation) {
  const effects = effectsOf(op);
  return {
    title: effects.title,
    readOnlyHint: effects.readOnly,
    destructiveHint: effects.destructive,
    idempotentHint: effects.idempotent,
    openWorldHint: effects.openWorld,
  };
}

/** The same facts as A2A skill tags (the card has no field for them). */
export function effectTags(op: Operation): string[] {
  const effects = effectsOf(op);
  return [
    effects.readOnly ? 'read-only' : 'writes',
    ...(effects.destructive ? ['destructive'] : []),
    ...(effects.idempotent ? ['idempotent'] : []),
    ...(effects.openWorld ? ['open-world'] : []),
  ];
}
