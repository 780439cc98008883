/** A stream slot: held from the request's arrival until its stream closes; release() is idempotent. */
export interface StreamSlot {
  release(): void;
}

/**
 * The per-token and instance-wide stream caps as one count, taken synchronously when a
 * request arrives (before anything is awaited), so concurrent opens see each other
 * (contract section 13, caps), and given back when the stream closes or never opens.
 */
export function createStreamSlots(limits: { maxStreams: number; perToken: number }) {
  const byToken = new Map<string, number>();
  let all = 0;
  return {
    take(tokenHash: string): StreamSlot | undefined {
      const mine = byToken.get(tokenHash) ?? 0;
      if (all >= limits.maxStreams || mine >= limits.perToken) return undefined;
      byToken.set(tokenHash, mine + 1);
      all++;
      let held = true;
      return {
        release() {
          if (!held) return;
          held = false;
          all--;
          const left = (byToken.get(tokenHash) ?? 1) - 1;
          if (left > 0) byToken.set(tokenHash, left);
          else byToken.delete(tokenHash);
        },
      };
    },
  };
}
