/**
 * The typed Focus client: openapi-fetch over the types that openapi-typescript generates
 * from Focus's OpenAPI document (schema.d.ts). Every path, parameter, request body and
 * answer is typed, errors included; request bodies list no read-only field.
 */
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, paths } from './schema.js';

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
export type Task = Schemas['Task'];
export type Session = Schemas['Session'];
export type Participation = Schemas['Participation'];
export type Occurrence = Schemas['Occurrence'];
export type Me = Schemas['Me'];
/** Every error body: RFC 9457 problem details; `errors` lists the broken rules of a 422. */
export type Problem = Schemas['Problem'];

/** Request bodies, read-only fields left out. */
export type TaskCreate = Schemas['TaskCreate'];
export type TaskUpdate = Schemas['TaskUpdate'];
export type TaskImport = Schemas['TaskImport'];
export type TaskImportItem = Schemas['TaskImportItem'];
export type SessionCreate = Schemas['SessionCreate'];
export type SessionUpdate = Schemas['SessionUpdate'];
