/** Who a request acts for: the user its bearer token resolved to, with their orgs. The one definition. */
export interface AuthenticatedUser {
  id: number;
  handle: string;
  orgIds: number[];
  /** The user's home time zone (IANA): where a session created without a `timezone` takes place. */
  timezone: string;
  /** What the credential may do (contract section 12); absent: all of the user's rights (CLI tokens, browser sessions). */
  scopes?: readonly string[];
  /** The credential that authenticated the request: streams re-check it by hash, sign-out revokes it by id. */
  credential?: { id: number; kind: TokenKind; hash: string };
}

/** `cli`: `focus tokens issue`; `personal`: /me/tokens; `app`: a connected app (device grant); `session`: a browser's sign-in cookie. */
export type TokenKind = 'cli' | 'personal' | 'app' | 'session';

/** A user handle: 1–64 characters of `a-z 0-9 . _ -`. The API schemas and the CLI both check it. */
export const HANDLE_PATTERN = '^[a-z0-9._-]{1,64}$';
const HANDLE = new RegExp(HANDLE_PATTERN);
export const isHandle = (value: string) => HANDLE.test(value);
