/* global process */
// Preloaded into the service process by the bench (`node --import ./bench/probe.js …`):
// measures event-loop delay from the inside without touching the service's code.
// On SIGUSR2 it writes {max, p99, mean} (ms) since the previous signal to
// BENCH_PROBE_FILE and starts a fresh histogram.
import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const file = process.env.BENCH_PROBE_FILE;
if (file) {
  // 10 ms resolution is enough to see a 100 ms stall and costs nothing measurable.
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  process.on('SIGUSR2', () => {
    const ms = (ns) => Math.round((ns / 1e6) * 10) / 10;
    const stats = { max: ms(histogram.max), p99: ms(histogram.percentile(99)), mean: ms(histogram.mean), at: Date.now() };
    histogram.reset();
    writeFileSync(file, JSON.stringify(stats));
  });
}
