/**
 * The Node flags `focus serve` runs with, wherever it is launched: the `start` script, the
 * Dockerfile's CMD and the CLI's shebang carry them as text (a test checks they match), and
 * the bench and test harnesses spawn the server with this list.
 *
 * A listing page allocates ~40 KB of rows, records and JSON per request. With V8's default
 * young generation, which stayed at 1 MB under that load, scavenges ran every few requests and
 * promoted short-lived rows; a 64 MB semi-space cut the CPU of a listing by about a fifth (19–32 %
 * in alternated runs) at about the same peak RSS (docs/performance.md, "Young generation").
 */
export const SERVE_NODE_FLAGS = ['--max-semi-space-size=64'] as const;
