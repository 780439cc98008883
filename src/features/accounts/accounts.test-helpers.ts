import { expect } from 'vitest';
import type { TestApp } from '../../../test/helpers/harness.js';

export const ORIGIN = 'http://localhost:80';

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: any;
  text: string;
}

/** A request as a browser on the web app sends it: the cookie, and our own origin unless `headers` say otherwise. */
export async function browser(t: TestApp, method: string, url: string, cookie: string | undefined, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await t.app.inject({
    method: method as 'GET',
    url,
    headers: {
      host: 'localhost:80',
      ...(method === 'GET' ? {} : { origin: t.app.publicUrl ?? ORIGIN, 'sec-fetch-site': 'same-origin' }),
      ...(cookie === undefined ? {} : { cookie: `focus_session=${cookie}` }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
  let parsed: unknown;
  try {
    parsed = res.body === '' ? undefined : JSON.parse(res.body);
  } catch {
    parsed = undefined;
  }
  return { status: res.statusCode, headers: res.headers, body: parsed, text: res.body };
}

/** The session cookie's value a response set, failing when it set none. */
export function sessionCookie(res: Answer): string {
  const header = String(res.headers['set-cookie'] ?? '');
  const value = /^focus_session=([^;]*);/.exec(header)?.[1];
  expect(value, header).toBeTruthy();
  return value as string;
}

/** Signs `handle` in with `password`; returns the cookie value. */
export async function signIn(t: TestApp, handle: string, password: string, address = '10.0.0.1'): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: '/auth/login', remoteAddress: address, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ handle, password }) });
  expect(res.statusCode, res.body).toBe(204);
  return sessionCookie({ status: res.statusCode, headers: res.headers, body: undefined, text: res.body });
}

/** The secret of an invitation link. */
export const secretOf = (url: string) => url.slice(url.indexOf('#') + 1);
