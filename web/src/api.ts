/**
 * The app's one way to the server: the generated typed client (clients/typescript) with the
 * session cookie (credentials: 'include'), plus `call` for endpoints that the OpenAPI
 * document does not describe yet (see api.people.ts). Same origin, so no base URL.
 */
import createClient from 'openapi-fetch';
import type { components, paths } from '../../clients/typescript/schema.js';

export type Schemas = components['schemas'];
export type Session = Schemas['Session'];
export type Task = Schemas['Task'];
export type Me = Schemas['Me'];
export type Problem = Schemas['Problem'];

export const api = createClient<paths>({ baseUrl: window.location.origin, credentials: 'include' });

/** What a failed request means to a person: the problem's detail, else its title, else the status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Partial<Problem> | undefined,
  ) {
    const fields = problem?.errors?.map((e) => `${e.path}: ${e.message}`).join('; ');
    super([problem?.detail ?? problem?.title ?? `The server answered ${status}`, fields].filter(Boolean).join(' — '));
  }
}

/** Unwraps `{ data }` of an openapi-fetch result, or throws the problem as an ApiError. */
export function must<T>(result: { data?: { data: T }; error?: unknown; response: Response }): T {
  if (result.data !== undefined) return result.data.data;
  throw new ApiError(result.response.status, result.error as Partial<Problem> | undefined);
}

/** Checks a result that carries no body (204), throwing its problem as an ApiError. */
export function done(result: { error?: unknown; response: Response }): void {
  if (!result.response.ok) throw new ApiError(result.response.status, result.error as Partial<Problem> | undefined);
}

/** A request outside the typed client: JSON in, `data` (or nothing on 204) out, problems thrown. */
export async function call<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(path, {
    method,
    credentials: 'include',
    headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  const parsed = text === '' ? undefined : (JSON.parse(text) as unknown);
  if (!response.ok) throw new ApiError(response.status, parsed as Partial<Problem> | undefined);
  return (parsed as { data?: T } | undefined)?.data ?? (parsed as T);
}

export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
