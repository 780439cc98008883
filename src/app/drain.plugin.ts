import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import fp from 'fastify-plugin';

/** How often a closing server looks for connections that have nothing in flight. */
const SWEEP_MS = 100;

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
      hookDone();
    });
    done();
  },
  { name: 'focus-drain' },
);
