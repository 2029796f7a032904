import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { Operation } from './types.ts';

/**
 * The registry's promise kept: what an operation answers matches the output schema OpenAPI, MCP and
 * A2A advertise for it. Checked on every call when CHECK_OUTPUT_SCHEMAS is on (the test suites
 * turn it on, so every body they produce on every surface is checked); a mismatch is a defect of
 * ours, so it fails the call as an internal error naming the operation and the field.
 */
const ajv = new Ajv({ allErrors: false, strict: false });
addFormats.default(ajv);
const compiled = new WeakMap<Operation, ValidateFunction>();

export class OutputSchemaMismatch extends Error {
  override name = 'OutputSchemaMismatch';
}

export function assertOutputMatches(op: Operation, body: unknown): void {
  let validate = compiled.get(op);
  if (!validate) {
    validate = ajv.compile(op.output);
    compiled.set(op, validate);
  }
  // The body as it goes on the wire (dates as strings, undefined fields left out).
  const wire = body === undefined ? undefined : JSON.parse(JSON.stringify(body));
  if (validate(wire)) return;
  const first = validate.errors![0];
  throw new OutputSchemaMismatch(
    `${op.id} answered a body its output schema does not allow: ${first.instancePath || '(body)'} ${first.message} (${JSON.stringify(first.params)})`,
  );
}
