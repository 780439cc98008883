/** Small tools for suites that talk to a real `focus serve` process over a socket. */

export interface HttpResult {
  status: number;
  contentType: string;
  body: unknown;
  /** Response headers, names in lower case. */
  headers: Record<string, string>;
}

/** One JSON request over a real socket. Network failures come back as status 0. */
export async function http(
  base: string,
  method: string,
  path: string,
  token?: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<HttpResult> {
  try {
    const res = await fetch(base + path, {
      method,
      headers: {
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      // keep the text
    }
    return { status: res.status, contentType: res.headers.get('content-type') ?? '', body: parsed, headers: Object.fromEntries(res.headers) };
  } catch (error) {
    return { status: 0, contentType: '', body: String(error), headers: {} };
  }
}

/** Runs fn over items with at most `width` in flight. */
export async function inParallel<T, R>(items: readonly T[], width: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(width, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T, i);
    }
  });
  await Promise.all(workers);
  return out;
}
