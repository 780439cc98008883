import fc from 'fast-check';
import { expect, it } from 'vitest';
import { PAGE_BYTE_BUDGET, jsonBytes, jsonStringBytesAtMost, withinPageBudget } from './api.js';

// Strings of any UTF-16 units: control characters, lone surrogates and pairs included.
const anyText = fc.option(fc.string({ unit: 'binary', maxLength: 300 }), { nil: null });

it('bounds a string’s bytes as JSON from above', () => {
  fc.assert(
    fc.property(anyText, (text) => {
      expect(jsonStringBytesAtMost(text)).toBeGreaterThanOrEqual(jsonBytes(text));
    }),
    { numRuns: 2_000 },
  );
  // The bound is reached: six bytes per control character.
  expect(jsonBytes('\u0001\u0002')).toBe(jsonStringBytesAtMost('\u0001\u0002'));
});

it('cuts a page where its exact sizes say, whether or not a bound is given', () => {
  // Sizes near the budget's scale, so that both the shortcut and the cut are taken.
  const sizes = fc.array(fc.record({ bytes: fc.integer({ min: 1, max: PAGE_BYTE_BUDGET / 2 }), slack: fc.nat(PAGE_BYTE_BUDGET / 4) }), { maxLength: 12 });
  fc.assert(
    fc.property(sizes, (items) => {
      const exact = withinPageBudget(items, (i) => i.bytes);
      expect(withinPageBudget(items, (i) => i.bytes, (i) => i.bytes + i.slack)).toEqual(exact);
    }),
    { numRuns: 2_000 },
  );
});

it('computes no exact size when the bounds fit the budget', () => {
  let exactCalls = 0;
  const items = Array.from({ length: 50 }, () => 'x'.repeat(100));
  const page = withinPageBudget(items, (t) => ++exactCalls && jsonBytes(t), jsonStringBytesAtMost);
  expect(page).toHaveLength(50);
  expect(exactCalls).toBe(0);
});
