import { describe, expect, it } from 'vitest';
import { Alarm } from './webhooks.dispatch-loop.js';

/** How long `sleep` took, in ms. */
async function timed(sleep: Promise<void>): Promise<number> {
  const started = performance.now();
  await sleep;
  return performance.now() - started;
}

describe('the dispatcher\'s alarm', () => {
  it('ends a rest when woken, and keeps a wake that came while awake for the next rest', async () => {
    const alarm = new Alarm();
    const stop = new AbortController();
    const resting = timed(alarm.sleep(10_000, stop.signal));
    setTimeout(() => alarm.wake(), 20);
    expect(await resting).toBeLessThan(1_000);
    // Deliveries queued while the dispatcher was claiming: its next rest ends at once, once.
    alarm.wake();
    expect(await timed(alarm.sleep(10_000, stop.signal))).toBeLessThan(100);
    expect(await timed(alarm.sleep(50, stop.signal))).toBeGreaterThanOrEqual(45);
  });

  it('ends a rest when stopped', async () => {
    const alarm = new Alarm();
    const stop = new AbortController();
    const resting = timed(alarm.sleep(10_000, stop.signal));
    setTimeout(() => stop.abort(), 20);
    expect(await resting).toBeLessThan(1_000);
    expect(await timed(alarm.sleep(10_000, stop.signal))).toBeLessThan(100);
  });
});
