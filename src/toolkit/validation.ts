import type { FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { boundedValidator } from './bounded-validation.js';
import type { FieldError } from './errors.js';
import { HOST_OR_HTTP_URL_FORMAT, isHostOrHttpUrl } from './web-address.js';

/*
 * Two validators: bodies are JSON and must already have the right types ("30" is
 * not a duration), while query strings and path parameters are text and are
 * coerced. allErrors so that a 422 lists every broken rule, not the first.
 */
// verbose: errors carry their schema, so a schema's `x-message` can explain a pattern in words.
const common: Options = { allErrors: true, strict: false, removeAdditional: false, useDefaults: false, verbose: true };
const bodyAjv = addFormats.default(new Ajv({ ...common, coerceTypes: false }));
const textAjv = addFormats.default(new Ajv({ ...common, coerceTypes: 'array' }));
for (const ajv of [bodyAjv, textAjv]) ajv.addFormat(HOST_OR_HTTP_URL_FORMAT, isHostOrHttpUrl);

const INTEGER_TEXT = /^-?\d+$/;

/** Top-level properties a text part declares as integers. */
function integerProperties(schema: object): string[] {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  return Object.entries(properties)
    .filter(([, p]) => p.type === 'integer')
    .map(([name]) => name);
}

/*
 * Ajv coerces any string JavaScript reads as a whole number ("0x10", "1e3", "1.0",
 * " 7") into an integer, so `/tasks/0x10` would name task 16. Only plain decimal
 * digits are integers here; anything else fails as the wrong type.
 */
function compileText(schema: object): ValidateFunction {
  const validate = textAjv.compile(schema);
  const integers = integerProperties(schema);
  if (integers.length === 0) return validate;
  const wrapped = ((data: unknown) => {
    const raw = (data ?? {}) as Record<string, unknown>;
    const bad = integers.filter((name) =>
      [raw[name]].flat().some((v) => typeof v === 'string' && !INTEGER_TEXT.test(v)),
    );
    const ok = validate(data);
    if (bad.length === 0) {
      wrapped.errors = validate.errors;
      return ok;
    }
    // Keep the other fields' errors so that one 422 still lists every broken rule.
    const others = (validate.errors ?? []).filter((e) => !bad.some((name) => e.instancePath === `/${name}`));
    wrapped.errors = [
      ...bad.map(
        (name): ErrorObject => ({
          keyword: 'type',
          instancePath: `/${name}`,
          schemaPath: `#/properties/${name}/type`,
          params: { type: 'integer' },
          message: 'must be integer',
        }),
      ),
      ...others,
    ];
    return false;
  }) as ValidateFunction;
  return wrapped;
}

/*
 * Validators by part and schema text: a process that builds many apps (the test suites build
 * hundreds) compiles each schema once. By text, not object: Fastify rebuilds every headers
 * schema (its keys lower-cased) for each app.
 */
const compiled = new Map<string, ValidateFunction>();

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const key = `${httpPart ?? ''}\0${JSON.stringify(schema)}`;
  let validate = compiled.get(key);
  if (validate === undefined) {
    validate = httpPart === 'body' ? boundedValidator(bodyAjv.compile(schema as object), schema as object) : compileText(schema as object);
    compiled.set(key, validate);
  }
  return validate;
};

const xMessage = (e: ErrorObject): string | undefined => {
  const message = (e.parentSchema as { 'x-message'?: unknown } | undefined)?.['x-message'];
  return typeof message === 'string' ? message : undefined;
};

const friendly: Record<string, (e: ErrorObject) => string> = {
  additionalProperties: () => 'unknown field',
  required: () => 'is required',
  // A schema of several types (`["integer", "string", "null"]`) names them all: "integer, string or null".
  type: (e) => `must be ${String((e.params as { type: string }).type).replace(/,(?=[^,]*$)/, ' or ').replace(/,/g, ', ')}`,
  const: (e) => `must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}`,
  pattern: (e) => xMessage(e) ?? 'has an invalid format',
  format: (e) => xMessage(e) ?? `must be a valid ${String((e.params as { format: string }).format)}`,
  enum: (e) => `must be one of ${((e.params as { allowedValues: unknown[] }).allowedValues).map((v) => JSON.stringify(v)).join(', ')}`,
};

/** Ajv errors as one FieldError per path: the most specific message wins, unions are summarised. */
export function toFieldErrors(errors: readonly ErrorObject[]): FieldError[] {
  const byPath = new Map<string, string[]>();
  for (const e of errors) {
    let path = e.instancePath;
    if (e.keyword === 'required') path += `/${(e.params as { missingProperty: string }).missingProperty}`;
    if (e.keyword === 'additionalProperties') path += `/${(e.params as { additionalProperty: string }).additionalProperty}`;
    const message = friendly[e.keyword]?.(e) ?? e.message ?? 'is invalid';
    const messages = byPath.get(path) ?? [];
    if (e.keyword === 'anyOf' || e.keyword === 'oneOf') {
      if (messages.length === 0) messages.push('does not match any allowed form');
    } else if (!messages.includes(message)) {
      messages.push(message);
    }
    byPath.set(path, messages);
  }
  return [...byPath].map(([path, messages]) => ({
    path: path === '' ? '/' : path,
    message: messages.filter((m) => m !== 'does not match any allowed form' || messages.length === 1).join('; '),
  }));
}

/**
 * For a route with `attachValidation`: the body's schema failures as field errors, so that
 * the service can add the rules a schema cannot express and answer one 422 listing every
 * broken rule. Anything but a body failure (a bad path id, a query field) is rethrown.
 */
export function bodySchemaErrors(request: FastifyRequest): FieldError[] {
  const error = request.validationError;
  if (error === undefined) return [];
  if (error.validationContext !== 'body') throw error;
  // Fastify types the attached error's details as any; they are Ajv's errors.
  const issues: unknown = error.validation;
  return toFieldErrors(issues as ErrorObject[]);
}

/** Whether the schema already flagged `field` (or the whole body): its other rules are not checked then. */
export function isFlagged(errors: readonly FieldError[], field: string): boolean {
  return errors.some((e) => e.path === '/' || e.path === `/${field}` || e.path.startsWith(`/${field}/`));
}
