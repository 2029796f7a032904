import type { TSchema } from '@sinclair/typebox';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { errors } from './errors.ts';

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
    validate = (coerce ? coercing : strict).compile(schema);
    cache.set(schema, validate);
  }
  return validate;
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

/** Checks input against the operation's schema; throws a 400 naming the first bad field. */
export function validateInput<T>(schema: TSchema, input: unknown, fromQuery: boolean): T {
  // An absent body is an empty object: the schema then names each required field that is missing.
  // A JSON null is a body, and not an object: it is refused like any other non-object.
  const value = input === undefined ? {} : input;
  const validate = validatorFor(schema, fromQuery);
  if (!validate(value)) {
    const first = describe(validate.errors![0]);
    throw errors.validation(first.message, { field: first.field });
  }
  return value as T;
}
