/**
 * A suite's summary line (seeds, counts): printed in CI, where a failure's log needs it,
 * and on request (`FOCUS_TEST_REPORT=1`); `npm test` on a laptop stays quiet.
 */
export function report(text: string): void {
  if (process.env.CI === 'true' || process.env.FOCUS_TEST_REPORT === '1') process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}
