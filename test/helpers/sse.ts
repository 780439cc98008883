/** A server-sent-events client for tests: every event and comment as it arrives, over a real socket. */

export interface SseEvent {
  event: string;
  id?: string;
  data: string;
  at: number;
}

export interface SseStream {
  status: number;
  headers: Headers;
  events: SseEvent[];
  comments: { text: string; at: number }[];
  /** The problem+json body when the stream was refused. */
  body?: unknown;
  /** Resolves with the first event (from `from` on) matching, or fails after `timeoutMs`. */
  waitFor(predicate: (e: SseEvent) => boolean, timeoutMs?: number, from?: number): Promise<SseEvent>;
  /** Resolves once the server has ended the stream. */
  readonly ended: Promise<void>;
  close(): void;
}

export async function openSse(base: string, path: string, token: string, headers: Record<string, string> = {}): Promise<SseStream> {
  const controller = new AbortController();
  const res = await fetch(base + path, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...headers }, signal: controller.signal });
  const events: SseEvent[] = [];
  const comments: { text: string; at: number }[] = [];
  const waiters = new Set<() => void>();
  const stream: SseStream = {
    status: res.status,
    headers: res.headers,
    events,
    comments,
    async waitFor(predicate, timeoutMs = 5_000, from = 0) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = events.slice(from).find(predicate);
        if (found !== undefined) return found;
        if (Date.now() > deadline) throw new Error(`no matching event within ${timeoutMs} ms; got ${JSON.stringify(events.map((e) => e.event + ' ' + e.data))}`);
        await new Promise<void>((resolve) => {
          const wake = () => {
            waiters.delete(wake);
            resolve();
          };
          waiters.add(wake);
          setTimeout(wake, 50);
        });
      }
    },
    ended: Promise.resolve(),
    close: () => controller.abort(),
  };
  if (res.status !== 200 || res.body === null) {
    stream.body = await res.json().catch(() => undefined);
    return stream;
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  (stream as { ended: Promise<void> }).ended = (async () => {
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += value;
        let cut = buffer.indexOf('\n\n');
        while (cut >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          cut = buffer.indexOf('\n\n');
          const event: SseEvent = { event: 'message', data: '', at: Date.now() };
          let isEvent = false;
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) comments.push({ text: line.slice(1).trim(), at: Date.now() });
            else if (line.startsWith('event: ')) {
              event.event = line.slice(7);
              isEvent = true;
            } else if (line.startsWith('id: ')) event.id = line.slice(4);
            else if (line.startsWith('data: ')) {
              event.data += line.slice(6);
              isEvent = true;
            }
          }
          if (isEvent) events.push(event);
          for (const wake of [...waiters]) wake();
        }
      }
    } catch {
      // Aborted by close().
    }
  })();
  return stream;
}
