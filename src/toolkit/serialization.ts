import type { FastifyReply, FastifySerializerCompiler } from 'fastify';
import fastJsonStringify from 'fast-json-stringify';

type Serialize = (data: unknown) => string;

/*
 * Response serializers by schema object, as Fastify's default compiler builds them (no shared
 * schemas, no options). Route schemas are module constants, so a process that builds many apps
 * (the test suites build hundreds) compiles each once: otherwise ~0.45 s of CPU per app.
 */
const compiled = new WeakMap<object, Serialize>();

export const serializerCompiler: FastifySerializerCompiler<unknown> = ({ schema }) => {
  const key = schema as object;
  let serialize = compiled.get(key);
  if (serialize === undefined) {
    serialize = fastJsonStringify(key) as Serialize;
    compiled.set(key, serialize);
  }
  return serialize;
};

declare const bodyOf: unique symbol;
/** A response body holding a T, written beforehand exactly as T's schema serializer would write it. */
export type SerializedBody<T> = string & { readonly [bodyOf]: T };
/** Marks text as a T's body: only for text built to T's schema (a test compares it with the serializer's). */
export const serializedBody = <T>(text: string): SerializedBody<T> => text as SerializedBody<T>;

/** Sends a body serialized beforehand: Fastify sends a string typed as JSON as it is, past the route's serializer. */
export function sendSerialized<T>(reply: FastifyReply, body: SerializedBody<T>): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(body);
}
