import { focusJson } from '../helpers/server-process.js';

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
