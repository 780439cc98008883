import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TSchema } from 'typebox';
import { preconditionFailed } from './errors.js';

/*
 * Entity tags (contract section 7). A tag is a hash of the exact body a response carries,
 * so it is strong, identical on every instance, and changes whenever anything in that
 * body changes. GET answers it (app/etag.plugin.ts); PUT and DELETE compare If-Match with
 * it inside their write transaction, after the row lock, so no write can slip in between.
 */

export const etagOf = (body: string | Buffer) => `"${createHash('sha256').update(body).digest('base64url')}"`;

const listedTags = (header: string) => header.split(',').map((t) => t.trim());

/** RFC 9110 If-None-Match: `*`, or a list of tags compared weakly (a `W/` prefix is ignored). */
export function noneMatch(header: string | undefined, tag: string): boolean {
  if (header === undefined) return true;
  return !listedTags(header).some((t) => t === '*' || t.replace(/^W\//, '') === tag);
}

/**
 * A write's precondition, run by the service inside its transaction once the record is
 * locked and known to be the caller's to change: `current` renders the record as GET would
 * answer it to that caller (called only when a tag has to be compared). Throws 412.
 */
export type Precondition<T> = (current: () => Promise<T>) => Promise<void>;

/**
 * RFC 9110 If-Match, compared strongly (a weak tag never matches): `*` holds for any
 * existing record; otherwise one of the listed tags must be the record's current tag.
 * Undefined without the header: the write proceeds unconditionally.
 */
export function ifMatch<T>(header: string | undefined, tagOf: (record: T) => string): Precondition<T> | undefined {
  if (header === undefined) return undefined;
  const listed = listedTags(header);
  // The service calls a precondition only for a record it found, so `*` holds.
  if (listed.includes('*')) return () => Promise.resolve();
  return async (current) => {
    if (!listed.includes(tagOf(await current()))) throw preconditionFailed();
  };
}

/**
 * The request's If-Match against the tag `GET` answers for a record: the record in its
 * `{ data }` envelope, serialized by the GET route's response schema `envelope` (the same
 * compiled serializer, so byte for byte the body that GET sends).
 */
export function ifMatchOf<T>(request: FastifyRequest, reply: FastifyReply, envelope: TSchema): Precondition<T> | undefined {
  // Fastify caches the compiled serializer per schema object, so this compiles once per route.
  const schema = envelope as Record<string, unknown>;
  return ifMatch<T>(request.headers['if-match'], (record) => etagOf(reply.serializeInput({ data: record }, schema)));
}
