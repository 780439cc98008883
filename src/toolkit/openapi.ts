import type { TSchema } from 'typebox';

/*
 * What the OpenAPI document needs from the schemas beyond validation: names. A named
 * schema is published once, under `#/components/schemas/<name>`, and every operation and
 * schema that uses it refers to it there, so a generated client has a type to import.
 * Routes keep using the schema objects themselves (validation, serialization and static
 * types are unchanged); the document generator swaps them for references.
 */

const NAME = Symbol('focus.openapi.name');
const registry = new Map<string, TSchema>();

/**
 * Names `schema` in the OpenAPI document. The name is a hidden property: `Type.Optional`
 * copies keep it, while a spread (`{...schema, type: [...]}`, a variant of the schema)
 * does not, and is then shown inline.
 */
export function Named<T extends TSchema>(name: string, schema: T): T {
  const known = registry.get(name);
  if (known !== undefined && known !== schema) throw new Error(`two schemas are named ${name} in the OpenAPI document`);
  Object.defineProperty(schema, NAME, { value: name, enumerable: false });
  registry.set(name, schema);
  return schema;
}

/** The document name of a schema (or of a `Type.Optional` copy of it), if it has one. */
export function nameOf(schema: unknown): string | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined;
  const name = (schema as { [NAME]?: unknown })[NAME];
  return typeof name === 'string' ? name : undefined;
}

/** The schema registered under `name`: what its component shows. */
export const namedSchema = (name: string): TSchema | undefined => registry.get(name);

/**
 * The same schema, marked read-only where it is used (a record's server-set field), still
 * referring to its component: generated request types leave such a field out.
 */
export function ReadOnly<T extends TSchema>(schema: T): T {
  const copy = { ...schema, readOnly: true };
  const name = nameOf(schema);
  if (name !== undefined) Object.defineProperty(copy, NAME, { value: name, enumerable: false });
  return copy;
}

/** A JSON success response in Fastify's content form: what it means, and its schema. */
export const jsonResponse = <T extends TSchema>(description: string, schema: T) => ({
  description,
  content: { 'application/json': { schema } },
});
