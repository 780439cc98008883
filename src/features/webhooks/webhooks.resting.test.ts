import { afterEach, expect, it, vi } from 'vitest';
import { describeEachDialect } from '../../../test/helpers/harness.js';
import { type JobsApp, createJobsApp } from '../../../test/helpers/jobs-app.js';
import { Receiver } from '../../../test/helpers/webhook-receiver.js';
import { sessionAt } from '../sessions/sessions.test-helpers.js';

/*
 * Idle, the fan-out and the dispatcher rest (2 s) instead of looking every 200 ms, so an
 * idle server costs next to nothing: a write (SQLite) or its change positioned (PostgreSQL)
 * wakes the fan-out, what the fan-out or clock queues wakes the dispatcher, and so does a
 * retry it scheduled. Here the rests are a minute: a delivery within seconds shows the wakes.
 */

const REST_MS = 60_000;
const PROMPT_MS = 8_000;
/** Whether every change is positioned and the fan-out's place is the last of them. */
async function passedEveryChange(t: JobsApp): Promise<boolean> {
  const log = await t.storage.db
    .selectFrom('changes')
    .select((eb) => [eb.fn.max('position').as('last'), eb.fn.countAll<number>().filterWhere('position', 'is', null).as('waiting')])
    .executeTakeFirstOrThrow();
  const state = await t.storage.db.selectFrom('webhook_state').select('position').where('name', '=', 'fanout').executeTakeFirst();
  return Number(log.waiting) === 0 && log.last !== null && Number(state?.position ?? 0) === Number(log.last);
}

/** Long enough for the dispatcher's first look to find nothing and its rest to begin. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 1_000));

describeEachDialect('webhooks: resting jobs', (dialect) => {
  let scene: { t: JobsApp; receiver: Receiver } | undefined;
  afterEach(async () => {
    await scene?.t.close();
    await scene?.receiver.stop();
    scene = undefined;
  });
  const started = async () => {
    // Retries 5 s × 0.2 = about 1 s after a failure: long after the failed attempt's turn has ended.
    const t = await createJobsApp(dialect, { restMs: REST_MS, retryScale: 0.2 });
    const receiver = await new Receiver().start();
    scene = { t, receiver };
    await t.start();
    const alice = await t.user('alice');
    return { t, receiver, alice };
  };

  it('is woken by what the fan-out queues, and by the retry it scheduled', async () => {
    const { t, receiver, alice } = await started();
    expect((await alice.post('/api/v1/webhooks', { url: receiver.url, events: ['task.created'] })).status).toBe(201);
    const session = (await alice.post('/api/v1/sessions', { org_id: 1, name: 'Deep work', type: 'standard', duration: 60, schedule: '2026-12-10', time: '9:00 AM' })).body.data;
    // The fan-out has passed every change so far (woken for them), then rests.
    await vi.waitFor(async () => expect(await passedEveryChange(t)).toBe(true), { timeout: PROMPT_MS, interval: 100 });
    await settle();
    receiver.answer = (_r, i) => (i === 0 ? 503 : 200);
    // One write: on SQLite its answer wakes the fan-out; on PostgreSQL the sequencer does, once it has positioned the change.
    expect((await alice.post('/api/v1/tasks', { context: 'Write the report', session_id: session.id })).status).toBe(201);
    // The first attempt fails; the retry, due about 1 s later, is sent when the dispatcher wakes itself for it.
    await receiver.until((r) => r.length >= 2, PROMPT_MS);
    expect(receiver.received[1]?.headers['webhook-id']).toBe(receiver.received[0]?.headers['webhook-id']);
  }, 30_000);

  it('is woken by what the clock queues', async () => {
    const { t, receiver, alice } = await started();
    expect((await alice.post('/api/v1/webhooks', { url: receiver.url, events: ['session.started'] })).status).toBe(201);
    const minute = 60_000;
    const base = Math.floor(Date.now() / minute) * minute;
    expect((await alice.post('/api/v1/sessions', sessionAt(new Date(base - 60 * minute), { name: 'Missed', duration: 30 }))).status).toBe(201);
    await settle();
    // As if the instances last looked at the clock 2 h ago: its next step raises the missed start.
    await t.storage.db.updateTable('webhook_state').set({ instant: new Date(base - 120 * minute).toISOString() }).where('name', '=', 'clock').execute();
    await receiver.until((r) => r.length >= 1, PROMPT_MS);
    expect((JSON.parse(receiver.received[0]?.body ?? '{}') as { type?: string }).type).toBe('session.started');
  }, 30_000);
});
