import { existsSync } from 'node:fs';

/** Debian's chromium package; playwright-core drives it, no browser is downloaded. */
export const CHROMIUM = process.env.FOCUS_TEST_CHROMIUM ?? '/usr/bin/chromium';

export const chromiumAvailable = (): boolean => existsSync(CHROMIUM);

/** Headless, and nothing that reaches the network on its own. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const CHROMIUM_SKIP_NOTICE = `Browser: SKIPPED, ${CHROMIUM} is missing (apt-get install -y chromium runs the /docs browser test)`;
