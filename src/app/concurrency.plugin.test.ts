import { connect } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { outsideGate } from '../toolkit/outside-gate.js';
import { addConcurrencyGate } from './concurrency.plugin.js';

/** A server whose one route waits until the test lets it finish, recording what started. */
async function gatedServer(max: number, beforeGate?: (name: string) => Promise<void>) {
  const started: string[] = [];
  const release = new Map<string, () => void>();
  const app: FastifyInstance = Fastify();
  await app.register((api, _options, done) => {
    // Work a request does before it reaches the gate (in the service: reading the body, the token lookup).
    if (beforeGate !== undefined) api.addHook('onRequest', (request) => beforeGate((request.params as { name: string }).name));
    addConcurrencyGate(api, max);
    api.get<{ Params: { name: string } }>('/work/:name', async (request) => {
      started.push(request.params.name);
      await new Promise<void>((resolve) => release.set(request.params.name, resolve));
      return { done: request.params.name };
    });
    api.get('/big', () => 'x'.repeat(32 * 1024 * 1024));
    // Waits outside the gate (a DNS lookup, say) until the test lets it finish, then answers in it.
    api.get<{ Params: { name: string } }>('/aside/:name', async (request) => {
      await outsideGate(request, () => new Promise<void>((resolve) => release.set(request.params.name, resolve)));
      started.push(`${request.params.name} back`);
      return { done: request.params.name };
    });
    done();
  });
  app.get('/healthz', () => ({ ok: true }));
  /**
   * Lets the server catch up: until `count` requests have started (a loaded machine may take
   * seconds), then 50 ms more, in which one that should still wait would start too.
   */
  const settle = async (count = 0) => {
    await vi.waitFor(
      () => {
        if (started.length < count) throw new Error(`${started.length} of ${count} requests started`);
      },
      { timeout: 10_000, interval: 5 },
    );
    await new Promise((r) => setTimeout(r, 50));
  };
  return { app, started, finish: (name: string) => release.get(name)?.(), settle };
}

/** A raw connection to the listening app, so a test can pipeline requests, stop reading or hang up. */
async function rawSocket(address: string) {
  const socket = connect(Number(new URL(address).port), '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  return socket;
}

describe('concurrency gate', () => {
  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('runs at most `max` requests at once and starts the others in arrival order', async () => {
    const s = await gatedServer(2);
    app = s.app;
    const responses = ['a', 'b', 'c', 'd'].map((name) => s.app.inject({ method: 'GET', url: `/work/${name}` }));
    await s.settle(2);
    expect(s.started).toEqual(['a', 'b']);
    s.finish('b');
    await s.settle(3);
    expect(s.started).toEqual(['a', 'b', 'c']);
    s.finish('a');
    await s.settle(4);
    expect(s.started).toEqual(['a', 'b', 'c', 'd']);
    s.finish('c');
    s.finish('d');
    expect((await Promise.all(responses)).map((r) => r.json<{ done: string }>().done)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('lets the next request run while one waits outside the gate, and queues it again after', async () => {
    const s = await gatedServer(1);
    app = s.app;
    const aside = s.app.inject({ method: 'GET', url: '/aside/a' });
    await s.settle();
    // a waits outside: its slot went to b, which runs at once.
    const b = s.app.inject({ method: 'GET', url: '/work/b' });
    await s.settle(1);
    expect(s.started).toEqual(['b']);
    // a's wait ends while b holds the one slot: a waits in line for it.
    s.finish('a');
    await s.settle(1);
    expect(s.started).toEqual(['b']);
    s.finish('b');
    expect((await b).json()).toEqual({ done: 'b' });
    expect((await aside).json()).toEqual({ done: 'a' });
    expect(s.started).toEqual(['b', 'a back']);
  });

  it('leaves routes outside the plugin alone', async () => {
    const s = await gatedServer(1);
    app = s.app;
    const busy = s.app.inject({ method: 'GET', url: '/work/a' });
    await s.settle(1);
    expect((await s.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    s.finish('a');
    expect((await busy).statusCode).toBe(200);
  });

  it('never starts a request whose client went away while it waited, and frees slots of those that did', async () => {
    const s = await gatedServer(1);
    app = s.app;
    const address = await s.app.listen({ port: 0, host: '127.0.0.1' });
    const holder = fetch(`${address}/work/a`);
    await s.settle(1);
    // A client that sends its request, then hangs up while it waits for the slot.
    const socket = await rawSocket(address);
    socket.write('GET /work/gone HTTP/1.1\r\nHost: x\r\n\r\n');
    await s.settle();
    socket.destroy();
    await s.settle();
    const after = fetch(`${address}/work/c`);
    await s.settle();
    s.finish('a');
    expect((await holder).status).toBe(200);
    await s.settle(2);
    expect(s.started).toEqual(['a', 'c']);
    s.finish('c');
    expect((await after).status).toBe(200);
  });

  it('never starts a request whose client went away before it reached the gate, and keeps no slot for it', async () => {
    let letThrough = () => {};
    const held = new Promise<void>((resolve) => (letThrough = resolve));
    const s = await gatedServer(1, (name) => (name === 'early' ? held : Promise.resolve()));
    app = s.app;
    const address = await s.app.listen({ port: 0, host: '127.0.0.1' });
    const socket = await rawSocket(address);
    socket.write('GET /work/early HTTP/1.1\r\nHost: x\r\n\r\n');
    await s.settle();
    // The client hangs up while its request is still on its way to the gate.
    socket.destroy();
    await s.settle();
    letThrough();
    await s.settle();
    const after = fetch(`${address}/work/b`);
    await s.settle(1);
    expect(s.started).toEqual(['b']);
    s.finish('b');
    expect((await after).status).toBe(200);
  });

  it('gives back the slots of pipelined requests whose connection closed while their responses were queued', async () => {
    const s = await gatedServer(1);
    app = s.app;
    const address = await s.app.listen({ port: 0, host: '127.0.0.1' });
    const socket = await rawSocket(address);
    // Node attaches a pipelined response to the socket only after the one before it; until
    // then it emits neither 'finish' nor 'close', also when the connection goes away.
    socket.write('GET /work/p1 HTTP/1.1\r\nHost: x\r\n\r\nGET /work/p2 HTTP/1.1\r\nHost: x\r\n\r\nGET /work/p3 HTTP/1.1\r\nHost: x\r\n\r\n');
    await s.settle(1);
    expect(s.started).toEqual(['p1']);
    s.finish('p1');
    await s.settle(2);
    expect(s.started).toEqual(['p1', 'p2']);
    socket.destroy();
    await s.settle();
    s.finish('p2');
    await s.settle();
    // p3's client is gone: it never starts, and neither p2 nor p3 keeps the slot.
    const after = fetch(`${address}/work/c`);
    await s.settle(3);
    expect(s.started).toEqual(['p1', 'p2', 'c']);
    s.finish('c');
    expect((await after).status).toBe(200);
  });

  it('frees the slot once the response is made, not when a slow reader has taken it all', async () => {
    const s = await gatedServer(1);
    app = s.app;
    const address = await s.app.listen({ port: 0, host: '127.0.0.1' });
    const socket = await rawSocket(address);
    // A client that asks for a large body and reads none of it.
    socket.pause();
    socket.write('GET /big HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((r) => setTimeout(r, 300));
    const after = fetch(`${address}/work/c`);
    await s.settle(1);
    expect(s.started).toEqual(['c']);
    s.finish('c');
    expect((await after).status).toBe(200);
    socket.destroy();
  });
});
