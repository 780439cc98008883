import fp from 'fastify-plugin';

/** How often a closing server looks for connections that became idle since it closed. */
const SWEEP_MS = 100;

/*
 * Closing ends every connection as soon as its last response is out. Node's
 * `server.close()` closes the connections idle at that moment and then waits for the
 * others to close; a keep-alive connection whose request was still running becomes idle
 * afterwards and would hold the close for the whole keep-alive timeout (72 s), so that a
 * SIGTERM during traffic ran into the drain deadline and exited 1. So once closing starts,
 * every response says `Connection: close`, and connections that go idle anyway (a
 * response already on its way when closing began) are closed as they do.
 */
export const drainPlugin = fp(
  (app, _options, done) => {
    let closing = false;
    let sweep: NodeJS.Timeout | undefined;
    app.addHook('preClose', (hookDone) => {
      closing = true;
      sweep = setInterval(() => app.server.closeIdleConnections(), SWEEP_MS).unref();
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
