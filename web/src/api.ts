/**
 * The app's one way to the server: the generated typed client (clients/typescript) with the
 * session cookie (credentials: 'include'). Same origin, so no base URL.
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

export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
