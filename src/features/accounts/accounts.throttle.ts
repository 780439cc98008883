import { LRUCache } from 'lru-cache';

/** The window failures are counted in. */
const WINDOW_MS = 15 * 60_000;
/** Failed sign-ins one address may make in a window, whatever handles it tries. */
export const ADDRESS_FAILURES = 20;
/** Failed sign-ins one address may make for one handle in a window. */
export const PAIR_FAILURES = 5;

interface Count {
  failures: number;
  since: number;
}

/**
 * A lockout-free throttle against password guessing (contract section 12). Failures are
 * counted per address and per handle-and-address; an address over either budget gets 429
 * until its window ends. Nothing is counted per handle alone: however many guesses others
 * make at a handle, its owner signs in from their own address with the right password,
 * so guessing cannot lock anyone out. A success clears the pair's count. Per process: with
 * several instances an attacker's budget is this times the instances, still bounded.
 */
export function createLoginThrottle(now: () => number = Date.now) {
  const counts = new LRUCache<string, Count>({ max: 100_000 });
  const keys = (handle: string, address: string) => [`a:${address}`, `p:${handle}\n${address}`] as const;
  const current = (key: string): Count | undefined => {
    const c = counts.get(key);
    return c === undefined || now() - c.since >= WINDOW_MS ? undefined : c;
  };

  return {
    /** Seconds to wait before this address may try this handle again, or 0 when it may now. */
    retryAfter(handle: string, address: string): number {
      const [a, p] = keys(handle, address);
      const limits: [Count | undefined, number][] = [
        [current(a), ADDRESS_FAILURES],
        [current(p), PAIR_FAILURES],
      ];
      let wait = 0;
      for (const [c, max] of limits) {
        if (c !== undefined && c.failures >= max) wait = Math.max(wait, Math.ceil((c.since + WINDOW_MS - now()) / 1000));
      }
      return wait;
    },
    failed(handle: string, address: string): void {
      for (const key of keys(handle, address)) {
        const c = current(key);
        counts.set(key, c === undefined ? { failures: 1, since: now() } : { failures: c.failures + 1, since: c.since });
      }
    },
    succeeded(handle: string, address: string): void {
      counts.delete(keys(handle, address)[1]);
    },
  };
}

export type LoginThrottle = ReturnType<typeof createLoginThrottle>;
