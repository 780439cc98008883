import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { CHROMIUM, CHROMIUM_ARGS } from '../helpers/browser.js';
import { type TestDatabase, createTestDatabase } from '../helpers/harness.js';
import { type ServerProcess, buildOnce, focusJson, startServer } from '../helpers/server-process.js';

/**
 * A person who signs in with a password, made the way an operator starts (contract
 * section 12, through the CLI and the running server): `focus users add … --admin` creates
 * org 1, `focus invite 1` prints a one-time link, the person's handle and password are sent
 * to /auth/invites/accept with that link's secret, and `--admin` makes them an admin too.
 */
export async function seedPerson(server: { url: string }, databaseUrl: string, handle: string, password: string, options: { admin?: boolean } = {}): Promise<void> {
  const env = { DATABASE_URL: databaseUrl };
  await focusJson(env, 'users', 'add', 'operator', '--org', '1', '--admin');
  const { url } = (await focusJson(env, 'invite', '1')) as { url: string };
  const secret = decodeURIComponent(new URL(url).hash.slice(1));
  const accepted = await fetch(`${server.url}/auth/invites/accept`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: server.url },
    body: JSON.stringify({ secret, handle, password }),
  });
  if (!accepted.ok) throw new Error(`accepting the invitation for ${handle}: ${accepted.status} ${await accepted.text()}`);
  if (options.admin === true) await focusJson(env, 'users', 'add', handle, '--org', '1', '--admin');
}

/** A web-app scene: a real server on a fresh SQLite database, `alice` an admin with `password`, and chromium. */
export interface WebScene {
  server: ServerProcess;
  browser: Browser;
  /** The server's database, for the CLI (`focus tokens issue …`). */
  databaseUrl: string;
}

/** Starts the scene before the suite's tests and tears it down after them; its fields are set once `beforeAll` ran. */
export function useWebScene(password: string): WebScene {
  const scene = {} as WebScene;
  let database: TestDatabase | undefined;
  beforeAll(async () => {
    await buildOnce();
    database = await createTestDatabase('sqlite');
    scene.databaseUrl = database.url;
    scene.server = await startServer({ DATABASE_URL: database.url, RATE_LIMIT: '0' });
    await seedPerson(scene.server, database.url, 'alice', password, { admin: true });
    scene.browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  }, 180_000);
  afterAll(async () => {
    await scene.browser?.close();
    await scene.server?.stop();
    await database?.drop();
  });
  return scene;
}
