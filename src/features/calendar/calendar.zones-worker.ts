import { setImmediate as nextTurn } from 'node:timers/promises';
import { parentPort } from 'node:worker_threads';
import { computeZoneNow } from './calendar.zones.js';

/*
 * The zones worker's thread (started by calendar.vtimezone.ts): computes zone definitions
 * off the event loop, one zone per turn of its own loop so that an urgent request (a feed
 * waiting for its zones) moves ahead of the start-up pass over every zone.
 */

/** What the main thread asks: these zones for this year; `urgent` ones go ahead of the queue. */
export interface ZonesRequest {
  thisYear: number;
  zones: string[];
  urgent: boolean;
}

/** Queued zones by `<year>|<zone>`, in order; a Map keeps insertion order and finds a zone to move in one step. */
const queue = new Map<string, { timezone: string; thisYear: number }>();
type Queued = [string, { timezone: string; thisYear: number }];
let running = false;

async function drain(port: NonNullable<typeof parentPort>): Promise<void> {
  running = true;
  while (queue.size > 0) {
    const [key, next] = queue.entries().next().value as Queued;
    queue.delete(key);
    port.postMessage(computeZoneNow(next.timezone, next.thisYear));
    // A turn for messages: urgent requests reorder the queue.
    await nextTurn();
  }
  running = false;
}

if (parentPort !== null) {
  const port = parentPort;
  port.on('message', ({ thisYear, zones, urgent }: ZonesRequest) => {
    const asked = new Map(zones.map((timezone): Queued => [`${thisYear}|${timezone}`, { timezone, thisYear }]));
    if (urgent) {
      const rest = [...queue].filter(([key]) => !asked.has(key));
      queue.clear();
      for (const [key, value] of [...asked, ...rest]) queue.set(key, value);
    } else {
      for (const [key, value] of asked) if (!queue.has(key)) queue.set(key, value);
    }
    if (!running) void drain(port);
  });
}
