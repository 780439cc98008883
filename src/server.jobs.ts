import type { FastifyInstance } from 'fastify';
import { createChangesRepository } from './changelog/changelog.repository.js';
import { sessionsApi } from './features/sessions/sessions.api.js';
import { createClock } from './features/webhooks/webhooks.clock.js';
import { startDispatch } from './features/webhooks/webhooks.dispatch-thread.js';
import { createFanout } from './features/webhooks/webhooks.fanout.js';
import { createWebhooksRepository } from './features/webhooks/webhooks.repository.js';
import type { WebhookSettings } from './features/webhooks/webhooks.service.js';

/** A background job: one step of work, called again while it reports work done. */
interface Job {
  name: string;
  /** How often to look for work once idle, milliseconds. */
  everyMs: number;
  /** Does one bounded step; returns how many things it handled (0 = idle). */
  step(): Promise<number>;
  /** After a run that handled something, once the job is idle again. */
  afterWork?(handled: number): Promise<void>;
  /** Once idle, wait this long instead of everyMs unless woken (Scheduled.wake): what it waits for mostly announces itself. */
  restMs?: number;
}

/** A scheduled job's state: how to start it, its one pending timer (none while it runs: keeping each would grow without end), when its last run ended, and whether a wake came during it. */
interface JobState {
  start: () => void;
  timer?: NodeJS.Timeout;
  lastEnd: number;
  woken: boolean;
}

interface Scheduled {
  /** There may be work for `job`: a resting job runs everyMs after its last run (at once if that has passed). */
  wake(job: Job): void;
}

const STATISTICS_INTERVAL_MS = 3_600_000;
/** How often an instance gives committed changes their place in commit order (PostgreSQL; SQLite runs no sequencer). */
const SEQUENCER_INTERVAL_MS = 200;
/** Changes are kept this long: a change-feed cursor is valid 7 days, plus a margin. */
export const CHANGE_RETENTION_MS = 8 * 86_400_000;
const PURGE_INTERVAL_MS = 3_600_000;
const PURGE_BATCH = 5_000;
const INDEXER_INTERVAL_MS = 3_600_000;
/** Webhooks: changes become deliveries this soon after they are positioned. */
const WEBHOOK_FANOUT_INTERVAL_MS = 200;
/** With no change to pass on, the fan-out looks this seldom unless woken: an idle server stays still. */
const WEBHOOK_FANOUT_REST_MS = 2_000;
/** Requests that change nothing: their answers wake no job. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Time-triggered events fire within 5 s of their instant: the clock ticks well inside that. */
const WEBHOOK_CLOCK_INTERVAL_MS = 1_000;
/** Delivered and failed deliveries are listed this long. */
export const WEBHOOK_DELIVERY_RETENTION_MS = 30 * 86_400_000;
/** Sessions indexed per step: bounded, so that a step never holds the event loop (or SQLite's write lock) long. */
const INDEXER_BATCH = 200;

/**
 * Runs each job now and then every `everyMs` (a job with `restMs`, once idle, that long
 * unless woken); a job that found work runs again at once (after pending I/O), until it is
 * idle. Errors are logged, never fatal. Everything stops when the app closes.
 */
function schedule(app: FastifyInstance, jobs: readonly Job[]): Scheduled {
  const states = new Map<Job, JobState>();
  let closed = false;
  // Steps in flight: closing waits for them, so none still queries the storage the app closes next.
  const running = new Set<Promise<void>>();
  app.addHook('onClose', async () => {
    closed = true;
    for (const state of states.values()) clearTimeout(state.timer);
    await Promise.allSettled([...running]);
  });
  for (const job of jobs) {
    const run = async (): Promise<void> => {
      let handled = 0;
      try {
        for (let n = await job.step(); n > 0 && !closed; n = await job.step()) {
          handled += n;
          await new Promise((resolve) => setImmediate(resolve));
        }
        if (handled > 0 && !closed) await job.afterWork?.(handled);
      } catch (error) {
        app.log.warn({ err: error, job: job.name }, 'background job failed; it runs again later');
      }
      if (closed) return;
      const rest = job.restMs !== undefined && handled === 0 && !state.woken;
      state.woken = false;
      state.lastEnd = Date.now();
      state.timer = setTimeout(state.start, rest ? job.restMs : job.everyMs).unref();
    };
    const state: JobState = {
      start: (): void => {
        state.timer = undefined;
        const step = run();
        running.add(step);
        void step.finally(() => running.delete(step));
      },
      lastEnd: 0,
      woken: false,
    };
    states.set(job, state);
    state.start();
  }
  return {
    wake(job) {
      const state = states.get(job);
      if (closed || state === undefined) return;
      // Running now (no timer): it may have read before what woke it, so its next wait is everyMs.
      if (state.timer === undefined) {
        state.woken = true;
        return;
      }
      clearTimeout(state.timer);
      state.timer = setTimeout(state.start, Math.max(0, state.lastEnd + job.everyMs - Date.now())).unref();
    },
  };
}

/** The background work a serving instance does; every instance may run it (each step is safe to run twice). */
export function startJobs(app: FastifyInstance, webhookSettings: WebhookSettings = { allowPrivate: false, retryScale: 1 }): void {
  const { storage } = app;
  const sessions = sessionsApi(storage);
  const changes = createChangesRepository(storage);
  // Sending runs on a thread of its own (a slow receiver holds a dispatcher slot there, never a request): the event loop serves requests.
  const dispatch = startDispatch(storage, webhookSettings, app.log);
  app.addHook('onClose', () => dispatch.close());
  // What the fan-out and the clock queue, this instance's dispatcher sends at once (it rests otherwise).
  const fanout = createFanout(storage, sessions, () => dispatch.wake());
  const fanoutJob: Job = {
    // The outbox: every change becomes a delivery per webhook that may see it, exactly once.
    name: 'webhook-fanout',
    everyMs: WEBHOOK_FANOUT_INTERVAL_MS,
    // Woken once this instance's changes are positioned (below); another process's are found within the rest.
    restMs: webhookSettings.restMs ?? WEBHOOK_FANOUT_REST_MS,
    step: () => fanout.step(),
  };
  const clock = createClock(storage, sessions, () => dispatch.wake());
  const webhooks = createWebhooksRepository(storage);
  const jobs = schedule(app, [
    fanoutJob,
    {
      name: 'webhook-clock',
      everyMs: WEBHOOK_CLOCK_INTERVAL_MS,
      step: () => clock.step(),
    },
    {
      name: 'webhook-purge',
      everyMs: PURGE_INTERVAL_MS,
      step: () => webhooks.purge({ before: new Date(Date.now() - WEBHOOK_DELIVERY_RETENTION_MS).toISOString(), limit: PURGE_BATCH }),
    },
    // Readers follow the change log by position; positions are given once rows commit. SQLite gives them as rows are written.
    ...(storage.serialWrites
      ? []
      : [
          {
            name: 'change-sequencer',
            everyMs: SEQUENCER_INTERVAL_MS,
            step: async () => {
              const positioned = await changes.sequence();
              if (positioned > 0) jobs.wake(fanoutJob);
              return positioned;
            },
          },
        ]),
    {
      name: 'change-purge',
      everyMs: PURGE_INTERVAL_MS,
      step: () => changes.purge(storage.db, { before: new Date(Date.now() - CHANGE_RETENTION_MS).toISOString(), limit: PURGE_BATCH }),
    },
    {
      // Statistics after the migrations (a new index has none), then hourly as tables grow.
      name: 'statistics',
      everyMs: STATISTICS_INTERVAL_MS,
      step: async () => {
        await storage.refreshStatistics();
        return 0;
      },
    },
    {
      // Builds the occurrence index of sessions stored before it existed, and extends
      // series without an end as days pass; until then listings expand them per request.
      name: 'occurrence-indexer',
      everyMs: INDEXER_INTERVAL_MS,
      step: () => sessions.indexStep(INDEXER_BATCH),
      // A large backlog changes the tables' shape: give the planner fresh statistics.
      afterWork: async (handled) => {
        app.log.info({ sessions: handled }, 'occurrence index built or extended');
        await storage.refreshStatistics();
      },
    },
  ]);
  // SQLite positions a change as it is written (the sequencer has nothing to do): a write answered is a change to pass on.
  app.addHook('onResponse', (request, reply, done) => {
    if (!SAFE_METHODS.has(request.method) && reply.statusCode < 400) jobs.wake(fanoutJob);
    done();
  });
}
