/**
 * The seed of every property-based suite: fixed by default, so that `npm test` and CI
 * are repeatable; `FC_SEED=<n>` replays a printed seed and `FC_SEED=random` explores.
 */
export const DEFAULT_SEED = 20_261_125;

export function propertySeed(): number {
  const raw = process.env.FC_SEED;
  if (raw === undefined || raw === '') return DEFAULT_SEED;
  if (raw === 'random') return Date.now() % 2_147_483_647;
  const seed = Number(raw);
  if (!Number.isSafeInteger(seed)) throw new Error(`FC_SEED must be an integer or "random", not ${raw}`);
  return seed;
}
