/** Who a request acts for: the user its bearer token resolved to, with their orgs. The one definition. */
export interface AuthenticatedUser {
  id: number;
  handle: string;
  orgIds: number[];
  /** The user's home time zone (IANA): where a session created without a `timezone` takes place. */
  timezone: string;
}

/** A user handle: 1–64 characters of `a-z 0-9 . _ -`. The API schemas and the CLI both check it. */
export const HANDLE_PATTERN = '^[a-z0-9._-]{1,64}$';
const HANDLE = new RegExp(HANDLE_PATTERN);
export const isHandle = (value: string) => HANDLE.test(value);
