import { type Socket, connect } from 'node:net';
import { createAuthService } from '../../src/features/auth/auth.service.js';
import { openStorage } from '../../src/storage/database.js';

/** HTTP/1.1 spoken byte by byte over a plain socket: for slow, malformed and hostile clients. */

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface RawConnection {
  socket: Socket;
  /** Everything the server sent so far. */
  received(): string;
  /** Resolves with the milliseconds from connecting until the server closed the connection. */
  closed: Promise<number>;
  write(data: string | Buffer): void;
  /** The first response on the connection, once complete (by Content-Length) or the connection closed. */
  response(): Promise<RawResponse | undefined>;
  destroy(): void;
}

export function parseResponse(text: string): RawResponse | undefined {
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const body = text.slice(end + 4);
  const length = headers['content-length'] === undefined ? undefined : Number(headers['content-length']);
  if (length !== undefined && Buffer.byteLength(body) < length) return undefined;
  return { status, headers, body: length === undefined ? body : Buffer.from(body).subarray(0, length).toString() };
}

export async function rawConnect(base: string): Promise<RawConnection> {
  const { hostname, port } = new URL(base);
  const socket = connect(Number(port), hostname);
  socket.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const started = Date.now();
  let text = '';
  const waiters: (() => void)[] = [];
  const notify = () => waiters.splice(0).forEach((w) => w());
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    text += chunk;
    notify();
  });
  const closed = new Promise<number>((resolve) =>
    socket.once('close', () => {
      notify();
      resolve(Date.now() - started);
    }),
  );
  let isClosed = false;
  void closed.then(() => (isClosed = true));
  return {
    socket,
    received: () => text,
    closed,
    write: (data) => {
      if (!socket.destroyed) socket.write(data);
    },
    async response() {
      for (;;) {
        const parsed = parseResponse(text);
        if (parsed !== undefined) return parsed;
        if (isClosed) return undefined;
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
    destroy: () => socket.destroy(),
  };
}

/** A migrated database with users holding one token each (handle → token). */
export async function seedUsers(url: string, handles: string[]): Promise<Record<string, string>> {
  const storage = openStorage({ databaseUrl: url });
  try {
    await storage.migrate();
    const admin = createAuthService(storage);
    const tokens: Record<string, string> = {};
    for (const handle of handles) {
      await admin.addUser(handle, [1]);
      tokens[handle] = (await admin.issueToken(handle)).token;
    }
    return tokens;
  } finally {
    await storage.close();
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The value at fraction `p` (0.5: the median) of `values`; 0 when there are none. */
export const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))] ?? 0;
