/**
 * The typed Focus client: openapi-fetch over the types that openapi-typescript generates
 * from Focus's OpenAPI document (schema.d.ts). Every path, parameter, request body and
 * answer is typed, errors included; read-only fields are left out of request bodies.
 */
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { Readable, Writable, components, paths } from './schema.js';

export type { components, operations, paths } from './schema.js';

export type FocusClient = Client<paths>;

/**
 * A client for the Focus server at `baseUrl` (e.g. `https://focus.example.com`; paths
 * start with `/api/v1`) that sends `token` (an `fst_` token from
 * `npx focus tokens issue <handle>`) as the bearer token of every request.
 */
export function createFocusClient(baseUrl: string, token: string, options: Omit<ClientOptions, 'baseUrl' | 'headers'> = {}): FocusClient {
  return createClient<paths>({ ...options, baseUrl, headers: { authorization: `Bearer ${token}` } });
}

type Schemas = components['schemas'];

/** Records as Focus answers them. */
export type Task = Readable<Schemas['Task']>;
export type Session = Readable<Schemas['Session']>;
export type Participation = Readable<Schemas['Participation']>;
export type Occurrence = Readable<Schemas['Occurrence']>;
export type Me = Readable<Schemas['Me']>;
/** Every error body: RFC 9457 problem details; `errors` lists the broken rules of a 422. */
export type Problem = Readable<Schemas['Problem']>;

/** Request bodies, read-only fields left out. */
export type TaskCreate = Writable<Schemas['TaskCreate']>;
export type TaskUpdate = Writable<Schemas['TaskUpdate']>;
export type TaskImport = Writable<Schemas['TaskImport']>;
export type TaskImportItem = Writable<Schemas['TaskImportItem']>;
export type SessionCreate = Writable<Schemas['SessionCreate']>;
export type SessionUpdate = Writable<Schemas['SessionUpdate']>;
