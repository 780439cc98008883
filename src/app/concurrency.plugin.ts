import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { setStepAside } from '../toolkit/outside-gate.js';
import { requestDropped } from './drain.plugin.js';

/**
 * Lets at most `max` requests of the plugin it is added to run at once; the others wait
 * their turn, first come first served, at no cost. Where statements run on the event loop
 * (SQLite), every request in flight adds its next step to each turn of the loop, so many
 * at once delay everything else, health checks included (docs/performance.md measures it).
 * A few at a time keep the CPU just as busy. A request whose client goes away while it
 * waits, or before it got here, never starts. The slot is taken once the body has arrived
 * and given back once the response is made: a client trickling its body in, or reading
 * the answer slowly, holds none (contract section 6, slow clients).
 */
export function addConcurrencyGate(app: FastifyInstance, max: number): void {
  let running = 0;
  const waiting: { start: () => void; drop: () => void; gone: boolean; socket: { destroyed: boolean } }[] = [];
  const next = () => {
    for (let turn = waiting.shift(); turn !== undefined; turn = waiting.shift()) {
      // Closing a connection ends its pipelined requests one after another: skip those whose turn comes in between.
      if (!turn.gone && !turn.socket.destroyed) return turn.start();
      turn.drop();
    }
    running--;
  };
  /** Per response in flight: gives its slot back (once). */
  const release = new WeakMap<object, () => void>();
  app.addHook('preValidation', (request, reply, done) => {
    // A client gone before its request got here (its body read, its token looked up): the
    // response will emit neither 'finish' nor 'close' again, so a slot it took would never
    // come back, and 16 such requests wedged the API. Like one gone while waiting, it never starts.
    const { socket } = request.raw;
    // A dropped request is never answered: the drain must not wait for its response at shutdown.
    const drop = () => requestDropped(reply.raw);
    if (reply.raw.destroyed || socket.destroyed) return drop();
    const turn = { start: () => done(), drop, gone: false, socket };
    let holding = false;
    const finished = () => {
      release.delete(reply.raw);
      reply.raw.off('finish', finished).off('close', finished);
      socket.off('close', finished);
      if (holding) {
        holding = false;
        next();
      } else {
        turn.gone = true;
        drop();
      }
    };
    // 'finish' when the response is sent; 'close' also when the connection ends first. A
    // pipelined response waiting behind an earlier one on its connection is not attached to
    // the socket yet and emits neither when the connection closes: the socket tells.
    reply.raw.once('finish', finished).once('close', finished);
    socket.once('close', finished);
    release.set(reply.raw, finished);
    turn.start = () => {
      holding = true;
      done();
    };
    // Waiting on something outside (a DNS lookup), a request gives its slot to the next in
    // line and queues again after: a slow resolver never holds the API (contract section 13).
    setStepAside(request, async (work) => {
      if (!holding) return work();
      holding = false;
      next();
      try {
        return await work();
      } finally {
        await new Promise<void>((resolve) => {
          const back = () => {
            holding = true;
            resolve();
          };
          // Gone meanwhile: the rest runs unanswered and takes no slot.
          if (socket.destroyed || reply.raw.destroyed) resolve();
          else if (running < max) {
            running++;
            back();
          } else waiting.push({ start: back, drop: resolve, gone: false, socket });
        });
      }
    });
    if (running < max) {
      running++;
      turn.start();
    } else waiting.push(turn);
  });
  // The work is done once the response is made: a client reading it slowly must not keep the slot.
  app.addHook('onSend', (_request, reply, payload, done) => {
    release.get(reply.raw)?.();
    done(null, payload);
  });
}

/** The gate for the routes of the scope it is registered in (the API, not the probes). */
export const concurrencyPlugin = fp<{ max: number }>(
  (app, { max }, done) => {
    addConcurrencyGate(app, max);
    done();
  },
  { name: 'focus-concurrency' },
);
