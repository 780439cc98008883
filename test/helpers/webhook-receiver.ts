import { type IncomingHttpHeaders, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { vi } from 'vitest';

export interface Received {
  /** The request's path: several webhooks may share one receiver (one host). */
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/**
 * A real webhook receiver on 127.0.0.1: records every request and answers with what
 * `answer` says (200 unless told otherwise), after `delayMs`; a request `silent` picks is
 * never answered (a receiver that hangs), until the receiver stops.
 */
export class Receiver {
  readonly received: Received[] = [];
  answer: (r: Received, index: number) => number = () => 200;
  delayMs = 0;
  silent: (r: Received) => boolean = () => false;
  private server: Server | undefined;
  url = '';
  /** http://127.0.0.1:<port>: for webhooks with paths of their own. */
  base = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const r = { path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
        this.received.push(r);
        if (this.silent(r)) return;
        const status = this.answer(r, this.received.length - 1);
        const reply = () => res.writeHead(status, { 'content-type': 'text/plain' }).end('ok');
        if (this.delayMs > 0) setTimeout(reply, this.delayMs);
        else reply();
      });
    });
    this.server.keepAliveTimeout = 1_000;
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    this.url = `${this.base}/hook`;
    return this;
  }

  /** The parsed bodies received so far. */
  payloads(): { type: string; timestamp: string; data: Record<string, unknown> }[] {
    return this.received.map((r) => JSON.parse(r.body) as { type: string; timestamp: string; data: Record<string, unknown> });
  }

  /** Waits until `predicate` holds of what was received, polling. */
  async until(predicate: (received: Received[]) => boolean, timeoutMs = 15_000, what = 'webhook deliveries'): Promise<void> {
    await vi.waitFor(
      () => {
        if (!predicate(this.received)) throw new Error(`timed out waiting for ${what}; received ${this.received.length}: ${this.received.map((r) => r.body.slice(0, 80)).join(' | ')}`);
      },
      { timeout: timeoutMs, interval: 25 },
    );
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}
