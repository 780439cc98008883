/**
 * The API's rules the forms state before a request is sent. The server is the authority;
 * test/openapi/openapi.test.ts checks these against the published schemas.
 */
export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 256;
/** A handle, as an input's `pattern` (anchored, `v` flag: the hyphen escaped). */
export const HANDLE_INPUT_PATTERN = '[a-z0-9._\\-]{1,64}';
/** Longest text fields, in characters after trimming. */
export const SESSION_NAME_MAX = 200;
export const TASK_CONTEXT_MAX = 2000;
export const FEED_NAME_MAX = 100;
export const TOKEN_NAME_MAX = 200;
