import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Worker } from 'node:worker_threads';
import { LRUCache } from 'lru-cache';
import { spawnThread } from '../../toolkit/threads.js';
import { VTIMEZONE_PAST_YEARS, type ZoneDefinition, computeZone, computeZoneNow, observance, offsetReader, spanOf } from './calendar.zones.js';
import type { ZonesRequest } from './calendar.zones-worker.js';

/*
 * VTIMEZONE components made from the runtime's own time-zone database (calendar.zones.ts
 * computes them). Packaged VTIMEZONE sets were considered and rejected: the one
 * ical-generator suggests (@touch4it/ical-timezones) ships 2018 data (Mexico City still
 * with DST, abolished in 2022).
 *
 * Cost: each zone's definition is computed once per process and year, off the event loop,
 * by the zones worker (a worker thread): at start for every zone the runtime names
 * (warmZones, 2.4 s of the worker's CPU), and on demand, ahead of that pass, for a zone a
 * feed needs first (prepareZones awaits it without holding the event loop). A feed then
 * only slices and joins the cached text. Should the worker be unavailable, prepareZones
 * computes here a slice at a time, giving the event loop a turn between slices.
 */

/** Zones kept at most (the runtime knows about 600 names, aliases included). */
const MAX_ZONES = 1024;

const zones = new LRUCache<string, ZoneDefinition>({ max: MAX_ZONES });
/** Offsets through Intl outside a definition's span (an occurrence decades away), one formatter per zone. */
const readers = new LRUCache<string, (ms: number) => number>({ max: MAX_ZONES });
/** Zones asked of the worker, by `<year>|<zone>`: resolved with the definition, or undefined once the worker is gone. */
const pending = new Map<string, { done: Promise<ZoneDefinition | undefined>; resolve: (zone: ZoneDefinition | undefined) => void }>();
let worker: Worker | undefined;
let workerFailed = false;
/** Ends the worker once idle this long: its thread holds about 50 MB, and starts again in tens of milliseconds. */
const WORKER_IDLE_MS = 30_000;
let idle: NodeJS.Timeout | undefined;

/** The zone's definition for `thisYear` when computed already. */
function known(timezone: string, thisYear: number): ZoneDefinition | undefined {
  const found = zones.get(timezone);
  return found?.thisYear === thisYear ? found : undefined;
}

function settle(key: string, zone: ZoneDefinition | undefined): void {
  if (zone !== undefined) zones.set(zone.timezone, zone);
  pending.get(key)?.resolve(zone);
  pending.delete(key);
  if (pending.size === 0) rest();
}

/** No answer awaited: the worker no longer holds the process open, and ends after WORKER_IDLE_MS. */
function rest(): void {
  const resting = worker;
  resting?.unref();
  clearTimeout(idle);
  idle = setTimeout(() => {
    if (resting !== worker || pending.size > 0) return;
    worker = undefined;
    void resting?.terminate();
  }, WORKER_IDLE_MS).unref();
}

/** The zones worker, started at the first need; undefined once it has failed (prepareZones then computes here). */
function zonesWorker(): Worker | undefined {
  if (worker !== undefined || workerFailed) return worker;
  try {
    worker = spawnThread(import.meta.url, 'calendar.zones-worker');
  } catch {
    workerFailed = true;
    return undefined;
  }
  worker.on('message', (zone: ZoneDefinition) => settle(`${zone.thisYear}|${zone.timezone}`, zone));
  worker.on('error', () => undefined);
  const started = worker;
  started.once('exit', () => {
    // Ended while idle (rest) is no failure; ended otherwise, zones are computed here from now on.
    if (worker !== started) return;
    workerFailed = true;
    worker = undefined;
    for (const key of [...pending.keys()]) settle(key, undefined);
  });
  return worker;
}

/** Asks the worker for the zones' definitions (those not asked yet, and the urgent ones ahead of the rest). */
function ask(timezones: readonly string[], thisYear: number, urgent: boolean): Promise<ZoneDefinition | undefined>[] {
  const thread = zonesWorker();
  if (thread === undefined) return timezones.map(() => Promise.resolve(undefined));
  const fresh: string[] = [];
  const answers = timezones.map((timezone) => {
    const key = `${thisYear}|${timezone}`;
    const waiting = pending.get(key);
    if (waiting !== undefined) return waiting.done;
    fresh.push(timezone);
    let resolve: (zone: ZoneDefinition | undefined) => void = () => undefined;
    const done = new Promise<ZoneDefinition | undefined>((r) => (resolve = r));
    pending.set(key, { done, resolve });
    return done;
  });
  const message: ZonesRequest = { thisYear, zones: urgent ? [...timezones] : fresh, urgent };
  if (message.zones.length > 0) thread.postMessage(message);
  // Held open while answers are awaited (a CLI or a test may await nothing else), and never otherwise.
  if (pending.size === 0) rest();
  else {
    clearTimeout(idle);
    thread.ref();
  }
  return answers;
}

/**
 * Starts computing every zone the runtime names, in the zones worker: a feed's zones are
 * then cached before it is first fetched. Resolves with how many were computed (0 when the
 * worker is unavailable: feeds then compute theirs as they come).
 */
export async function warmZones(now = new Date()): Promise<number> {
  const thisYear = now.getUTCFullYear();
  const missing = Intl.supportedValuesOf('timeZone').filter((timezone) => known(timezone, thisYear) === undefined);
  return (await Promise.all(ask(missing, thisYear, false))).filter((zone) => zone !== undefined).length;
}

/** Computes a zone here, a slice at a time, giving the event loop a turn between slices. */
async function computeHere(timezone: string, thisYear: number): Promise<void> {
  const steps = computeZone(timezone, thisYear);
  for (let step = steps.next(); ; step = steps.next()) {
    if (step.done === true) {
      zones.set(timezone, step.value);
      return;
    }
    await nextTurn();
  }
}

/**
 * The definitions of the zones not known yet, from the zones worker ahead of anything else
 * it has to do: a feed naming hundreds of new zones waits for them, nobody else does.
 */
export async function prepareZones(timezones: Iterable<string>, now = new Date()): Promise<void> {
  const thisYear = now.getUTCFullYear();
  const missing = [...new Set(timezones)].filter((timezone) => known(timezone, thisYear) === undefined);
  if (missing.length === 0) return;
  const answers = await Promise.all(ask(missing, thisYear, true));
  for (const [i, timezone] of missing.entries()) if (answers[i] === undefined) await computeHere(timezone, thisYear);
}

/** The zone's definition for `thisYear`; computed here and now when not prepared (a unit test, or a zone evicted meanwhile). */
function definitionOf(timezone: string, thisYear: number): ZoneDefinition {
  const found = known(timezone, thisYear);
  if (found !== undefined) return found;
  const zone = computeZoneNow(timezone, thisYear);
  zones.set(timezone, zone);
  return zone;
}

function readerOf(timezone: string): (ms: number) => number {
  const found = readers.get(timezone);
  if (found !== undefined) return found;
  const reader = offsetReader(timezone);
  readers.set(timezone, reader);
  return reader;
}

/**
 * The offset (minutes east of UTC) of `timezone` at `ms`: from the zone's computed changes
 * inside their span (no Intl call), through the runtime outside it; 0 for an unknown zone.
 */
export function offsetAt(timezone: string, ms: number, now = new Date()): number {
  const zone = definitionOf(timezone, now.getUTCFullYear());
  if (!zone.valid) return 0;
  const { changes } = zone;
  const span = spanOf(zone.thisYear);
  if (ms < span.start || ms >= span.end) return readerOf(timezone)(ms);
  // The last change at or before `ms`, by bisection.
  let lo = -1;
  let hi = changes.length;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if ((changes[mid]?.at ?? Infinity) <= ms) lo = mid;
    else hi = mid;
  }
  return lo < 0 ? zone.base : (changes[lo]?.to ?? zone.base);
}

/**
 * The VTIMEZONE of `timezone` covering `fromYear` (clamped to the last
 * VTIMEZONE_PAST_YEARS) onwards, lines joined by CRLF; null for a zone the runtime does
 * not know. The zone's changes are computed once per process and year.
 */
export function vtimezone(timezone: string, fromYear: number, now = new Date()): string | null {
  const thisYear = now.getUTCFullYear();
  const zone = definitionOf(timezone, thisYear);
  if (!zone.valid) return null;
  const start = Date.UTC(Math.min(Math.max(fromYear, thisYear - VTIMEZONE_PAST_YEARS), thisYear), 0, 1);
  // Changes strictly after the start are listed; the one in force at the start opens the definition.
  let first = 0;
  while (first < zone.changes.length && (zone.changes[first]?.at ?? Infinity) <= start) first += 1;
  const initial = first === 0 ? zone.base : (zone.changes[first - 1]?.to ?? zone.base);
  return ['BEGIN:VTIMEZONE', `TZID:${timezone}`, observance({ at: start, from: initial, to: initial }), ...zone.observances.slice(first), 'END:VTIMEZONE'].join('\r\n');
}
