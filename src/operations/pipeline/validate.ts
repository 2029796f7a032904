import type { TSchema } from '@sinclair/typebox';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { errors } from '../../core/errors.ts';

// Bodies are JSON and must already have the declared types; query strings are text, so integers
// and booleans in them are converted first.
const strict = new Ajv({ allErrors: false, strict: false });
const coercing = new Ajv({ allErrors: false, strict: false, coerceTypes: 'array' });
addFormats.default(strict);
addFormats.default(coercing);

const compiled = new WeakMap<TSchema, ValidateFunction>();
const compiledCoercing = new WeakMap<TSchema, ValidateFunction>();

function validatorFor(schema: TSchema, coerce: boolean): ValidateFunction {
  const cache = coerce ? compiledCoercing : compiled;
  let validate = cache.get(schema);
  if (!validate) {
    validate = (coerce ? coercing : strict).compile(withStorageBounds(schema) as TSchema);
    cache.set(schema, validate);
  }
  return validate;
}

/** Keywords whose value is data, not a schema. */
const LITERAL_KEYWORDS = new Set(['const', 'enum', 'default', 'examples', 'required']);
/** Keywords whose value maps names to schemas. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

/**
 * The schema as compiled: every integer that declares no bound of its own gets the range every
 * storage engine holds (JavaScript's safe integers, inside PostgreSQL's bigint), so a value such as
 * 1e20 is a 400 naming the field rather than an error from the database. The declaration itself is
 * left as it is (documents show what the operation declares).
 */
export function withStorageBounds(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withStorageBounds);
  if (schema === null || typeof schema !== 'object') return schema;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (LITERAL_KEYWORDS.has(key)) copy[key] = value;
    else if (SCHEMA_MAPS.has(key) && value !== null && typeof value === 'object' && !Array.isArray(value))
      // Named schemas: a property called `default` or `enum` is a schema like any other.
      copy[key] = Object.fromEntries(
        Object.entries(value).map(([name, sub]) => [name, withStorageBounds(sub)]),
      );
    else copy[key] = withStorageBounds(value);
  }
  const type = copy.type;
  if (type === 'integer' || (Array.isArray(type) && type.includes('integer'))) {
    if (copy.minimum === undefined && copy.exclusiveMinimum === undefined)
      copy.minimum = Number.MIN_SAFE_INTEGER;
    if (copy.maximum === undefined && copy.exclusiveMaximum === undefined)
      copy.maximum = Number.MAX_SAFE_INTEGER;
  }
  return copy;
}

function fieldName(path: readonly (string | number)[]): string {
  return path.length === 0 ? '(body)' : path.join('.');
}

/**
 * The deepest nesting of arrays and objects an input may have. JSON.parse reads any depth, but
 * JSON.stringify and every recursive walk overflow the call stack on a value some thousands of
 * levels deep: such input is refused at validation, and measured by no one before it.
 */
export const MAX_NESTING = 32;

/** Whether arrays and objects nest deeper than `max` in the value (walked without recursion). */
export function nestedDeeperThan(value: unknown, max: number = MAX_NESTING): boolean {
  const pending: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  while (pending.length > 0) {
    const { value: current, depth } = pending.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth >= max) return true;
    for (const item of Array.isArray(current) ? current : Object.values(current))
      if (item !== null && typeof item === 'object') pending.push({ value: item, depth: depth + 1 });
  }
  return false;
}

/**
 * What no storage engine holds, anywhere in a value that passed its schema (fields the schema
 * leaves open included): a NUL character in a string or a property name (PostgreSQL text refuses
 * U+0000), a number that is not finite (JSON's 1e400 parses to Infinity), and nesting deeper
 * than MAX_NESTING. Walked with a stack of its own, so however deep the value, the walk cannot
 * overflow the call stack.
 */
function storageProblem(value: unknown): { field: string; message: string } | undefined {
  return storable(value) ? undefined : namedStorageProblem(value);
}

/** What no storage engine holds in a string or a number: the end of the message naming it. */
function leafProblem(value: unknown): string | undefined {
  if (typeof value === 'string')
    return value.includes('\u0000') ? 'must not contain the NUL character (U+0000)' : undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : 'must be a finite number';
  return undefined;
}

/**
 * Whether nothing in the value is a storage problem: the same walk, keeping depths instead of paths
 * (a path array per field is most of the walk's cost, and a field is named only when one is found).
 */
function storable(value: unknown): boolean {
  const values: unknown[] = [value];
  const depths: number[] = [0];
  while (values.length > 0) {
    const current = values.pop();
    const depth = depths.pop() as number;
    if (depth > MAX_NESTING) return false;
    if (current === null || typeof current !== 'object') {
      if (leafProblem(current)) return false;
    } else if (Array.isArray(current)) {
      for (const item of current) {
        values.push(item);
        depths.push(depth + 1);
      }
    } else {
      for (const key in current) {
        if (!Object.hasOwn(current, key)) continue;
        if (key.includes('\u0000')) return false;
        values.push((current as Record<string, unknown>)[key]);
        depths.push(depth + 1);
      }
    }
  }
  return true;
}

function namedStorageProblem(value: unknown): { field: string; message: string } | undefined {
  const pending: { value: unknown; path: (string | number)[] }[] = [{ value, path: [] }];
  while (pending.length > 0) {
    const { value: current, path } = pending.pop()!;
    if (path.length > MAX_NESTING) {
      const field = fieldName(path.slice(0, MAX_NESTING));
      return { field, message: `${field} is nested deeper than ${MAX_NESTING} levels` };
    }
    if (current === null || typeof current !== 'object') {
      const problem = leafProblem(current);
      if (problem) {
        const field = fieldName(path);
        return { field, message: `${field} ${problem}` };
      }
    } else if (Array.isArray(current)) {
      for (let index = current.length - 1; index >= 0; index--)
        pending.push({ value: current[index], path: [...path, index] });
    } else {
      const keys = Object.keys(current);
      for (let index = keys.length - 1; index >= 0; index--) {
        const key = keys[index];
        if (key.includes('\u0000')) {
          const field = fieldName(path);
          return { field, message: `${field} must not have a property name with the NUL character (U+0000)` };
        }
        pending.push({ value: (current as Record<string, unknown>)[key], path: [...path, key] });
      }
    }
  }
  return undefined;
}

function describe(error: ErrorObject): { field: string; message: string } {
  let field = error.instancePath.replace(/^\//, '').replace(/\//g, '.') || '(body)';
  if (error.keyword === 'required') {
    const missing = (error.params as { missingProperty: string }).missingProperty;
    field = field === '(body)' ? missing : `${field}.${missing}`;
    return { field, message: `${field} is required` };
  }
  if (error.keyword === 'additionalProperties') {
    const extra = (error.params as { additionalProperty: string }).additionalProperty;
    return { field: extra, message: `${extra} is not a known field` };
  }
  return { field, message: `${field} ${error.message ?? 'is invalid'}` };
}

/** Removes NUL characters from every string in a parsed value, in place (walked without recursion). */
function stripNulCharacters(value: unknown): unknown {
  if (typeof value === 'string') return value.replaceAll('\u0000', '');
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const current = pending.pop();
    if (current === null || typeof current !== 'object') continue;
    const record = current as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const item = record[key];
      if (typeof item === 'string') record[key] = item.replaceAll('\u0000', '');
      else if (item !== null && typeof item === 'object') pending.push(item);
    }
  }
  return value;
}

/**
 * Checks input against the operation's schema; throws a 400 naming the first bad field.
 * `stripNul`: the operation sanitizes its text itself, so NUL characters in strings are removed
 * instead of refused.
 */
export function validateInput<T>(schema: TSchema, input: unknown, fromQuery: boolean, stripNul = false): T {
  // An absent body is an empty object: the schema then names each required field that is missing.
  // A JSON null is a body, and not an object: it is refused like any other non-object.
  const value = input === undefined ? {} : stripNul ? stripNulCharacters(input) : input;
  const validate = validatorFor(schema, fromQuery);
  if (!validate(value)) {
    const first = describe(validate.errors![0]);
    throw errors.validation(first.message, { field: first.field });
  }
  const problem = storageProblem(value);
  if (problem) throw errors.validation(problem.message, { field: problem.field });
  return value as T;
}
