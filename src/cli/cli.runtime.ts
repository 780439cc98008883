/**
 * The Node flags `focus serve` runs with, wherever it is launched: the `start` script, the
 * Dockerfile's CMD and the CLI's shebang carry them as text (a test checks they match), and
 * the bench and test harnesses spawn the server with this list.
 *
 * A listing page allocates ~40 KB of rows, records and JSON per request. With V8's default
 * young generation, which stayed at 1 MB under that load, scavenges ran so often that they
 * promoted short-lived rows and cost a fifth of the CPU; a 64 MB semi-space cut CPU per listing
 * by ~30 % at +10 MB of RSS (docs/performance.md, "Young generation").
 */
export const SERVE_NODE_FLAGS = ['--max-semi-space-size=64'] as const;
