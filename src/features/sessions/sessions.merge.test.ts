import fc from 'fast-check';
import { expect, it } from 'vitest';
import { takeMerged } from './sessions.merge.js';

it('takes the first n items of sorted streams, in order, as sorting their union would', () => {
  fc.assert(
    fc.property(fc.array(fc.array(fc.integer({ min: -50, max: 50 }))), fc.nat(60), (lists, n) => {
      const sorted = lists.map((l) => [...l].sort((a, b) => a - b));
      const expected = sorted.flat().sort((a, b) => a - b).slice(0, n);
      expect(takeMerged(sorted.map((l) => l[Symbol.iterator]()), (a, b) => a < b, n)).toEqual(expected);
    }),
    { numRuns: 500 },
  );
});

it('pulls no further from a stream than the result needs', () => {
  let pulled = 0;
  function* counting(): Generator<number> {
    for (let i = 0; ; i++) {
      pulled++;
      yield i;
    }
  }
  expect(takeMerged([counting(), [5, 6][Symbol.iterator]()], (a, b) => a < b, 3)).toEqual([0, 1, 2]);
  expect(pulled).toBeLessThanOrEqual(4);
});
