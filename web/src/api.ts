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

const signedOutListeners = new Set<() => void>();
/**
 * Calls `fn` whenever a request is refused with 401: the browser session has ended (signed out
 * elsewhere, a new password). Not for the two requests whose 401 is an answer, not a loss: `GET /me`
 * (who is signed in?) and a sign-in with a wrong password.
 */
export function whenSignedOut(fn: () => void): () => void {
  signedOutListeners.add(fn);
  return () => signedOutListeners.delete(fn);
}
api.use({
  onResponse({ response, schemaPath }) {
    if (response.status === 401 && schemaPath !== '/api/v1/me' && schemaPath !== '/auth/login') for (const fn of signedOutListeners) fn();
  },
});

/** What a failed request means to a person: its field errors as sentences, else its detail, title or status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Partial<Problem> | undefined,
  ) {
    const fields = problem?.errors?.map(fieldSentence).join(' ');
    const summary = problem?.detail ?? problem?.title ?? `The server answered ${status}`;
    // A 422's detail only counts the broken rules; its sentences say which.
    super(fields && problem?.type?.endsWith('/validation-failed') ? fields : [summary, fields].filter(Boolean).join(' '));
  }

  /** The body's top-level fields the errors are about (`/items/2/title` → `items`). */
  get fields(): string[] {
    return (this.problem?.errors ?? []).map((e) => e.path.split('/')[1] ?? '').filter(Boolean);
  }
}

/** Fields whose name in the API is not what the forms call them. */
const PEOPLE_NAMES: Readonly<Record<string, string>> = { urls: 'site to block', category: 'category to block' };

/** "/items/2/title" + "must be …" → "Title (item 3) must be …." A pointer is for programs, the field's name for people. */
function fieldSentence({ path, message }: { path: string; message: string }): string {
  const steps = path.split('/').filter(Boolean);
  const field = steps.filter((step) => !/^\d+$/.test(step)).at(-1);
  const name = field === undefined ? 'The request' : (PEOPLE_NAMES[field] ?? field.replace(/_/g, ' '));
  const index = steps.findLast((step) => /^\d+$/.test(step));
  const subject = name.charAt(0).toUpperCase() + name.slice(1) + (index === undefined ? '' : ` (item ${Number(index) + 1})`);
  return `${subject} ${message}${/[.!?]$/.test(message) ? '' : '.'}`;
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
