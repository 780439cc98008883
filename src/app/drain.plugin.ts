import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import fp from 'fastify-plugin';

/** How often a closing server looks for connections that have nothing in flight. */
const SWEEP_MS = 100;
/**
 * How long a closed server waits for handlers still running after their client went away,
 * before the plugins registered earlier (storage) release what those handlers use.
 */
export const ABANDONED_HANDLERS_WAIT_MS = 2_000;

/** Per response the drain still counts: stops counting it (once). */
const settlers = new WeakMap<ServerResponse, () => void>();

/**
 * Tells the drain that a request was dropped before its handler ran (the concurrency gate
 * never starts one whose client went away): nothing will end its response, and nothing
 * of it uses storage any more, so closing must not wait for it.
 */
export function requestDropped(response: ServerResponse): void {
  settlers.get(response)?.();
}

/*
 * Closing ends every connection as soon as it has no response in flight. Node's
 * `server.close()` closes the connections idle at that moment and waits for every other
 * one, and two kinds never ended by themselves:
 * - a keep-alive connection whose request was still running became idle afterwards and
 *   held the close for the whole keep-alive timeout (72 s), so that a SIGTERM during
 *   traffic ran into the drain deadline and exited 1;
 * - a connection opened but not yet used (clients and browsers open spare ones) counts as
 *   waiting for its headers, not as idle, and the header deadline that would close it is
 *   no longer checked once the server closes: it held the close for good.
 * So once closing starts, every response says `Connection: close`, and every connection
 * without a response in flight is closed, now and as others come to that point. A
 * request whose headers had not all arrived is cut; it would only have got a 503.
 *
 * A client that goes away mid-request ends its connection, but its handler runs on; Node
 * then counts nothing in flight, and storage closed under the handler ("driver has already
 * been destroyed", logged as an unhandled error). So each request also counts until its
 * response is ended (Fastify ends it after every onSend hook, also for a client gone; an
 * event stream ends it when the stream ends), and closing waits for that count, bounded by
 * ABANDONED_HANDLERS_WAIT_MS. This plugin's onClose runs before storage's: Fastify runs the
 * onClose hooks of one level last-registered first.
 */
export const drainPlugin = fp(
  (app, _options, done) => {
    /** Open connections, with how many of their responses are unfinished. */
    const connections = new Map<Socket, number>();
    app.server.on('connection', (socket: Socket) => {
      connections.set(socket, 0);
      socket.once('close', () => connections.delete(socket));
    });
    app.server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      const { socket } = request;
      connections.set(socket, (connections.get(socket) ?? 0) + 1);
      response.once('close', () => {
        const inFlight = connections.get(socket);
        if (inFlight === undefined) return;
        connections.set(socket, inFlight - 1);
        if (closing && inFlight === 1) socket.destroySoon();
      });
    });

    /** Requests whose response has not been ended yet, and who waits for there to be none. */
    let unended = 0;
    let whenNoneUnended: (() => void) | undefined;
    app.addHook('onRequest', (_request, reply, hookDone) => {
      unended++;
      const res = reply.raw;
      const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
      let ended = false;
      const settle = () => {
        if (ended) return;
        ended = true;
        settlers.delete(res);
        if (--unended === 0) whenNoneUnended?.();
      };
      settlers.set(res, settle);
      res.end = ((...args: unknown[]) => {
        settle();
        return end(...args);
      }) as typeof res.end;
      // A hijacked response (an event stream) whose client left is never ended by anyone; its
      // handler is done (it returned when it hijacked). Any other reply is still being made.
      res.once('close', () => {
        if (reply.sent) settle();
      });
      hookDone();
    });

    let closing = false;
    let sweep: NodeJS.Timeout | undefined;
    const closeUnused = () => {
      for (const [socket, inFlight] of connections) if (inFlight === 0) socket.destroySoon();
    };
    app.addHook('preClose', (hookDone) => {
      closing = true;
      closeUnused();
      // A connection whose last response ends is closed by the listener above; this catches
      // any the events missed (a response that never emitted close is still bounded by the
      // drain deadline).
      sweep = setInterval(closeUnused, SWEEP_MS).unref();
      hookDone();
    });
    app.addHook('onSend', (_request, reply, payload, hookDone) => {
      if (closing) reply.header('connection', 'close');
      hookDone(null, payload);
    });
    app.addHook('onClose', (_app, hookDone) => {
      clearInterval(sweep);
      if (unended === 0) return hookDone();
      const deadline = setTimeout(() => {
        whenNoneUnended = undefined;
        hookDone();
      }, ABANDONED_HANDLERS_WAIT_MS).unref();
      whenNoneUnended = () => {
        clearTimeout(deadline);
        whenNoneUnended = undefined;
        hookDone();
      };
    });
    done();
  },
  { name: 'focus-drain' },
);
