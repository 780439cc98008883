import { Command } from 'commander';
import { environmentHelp } from '../config/config.docs.js';
import { type Config, describeDatabase, loadConfig, prepareDatabaseLocation } from '../config/config.js';
import { PACKAGE } from '../config/config.package.js';
import { type AuthService, AdminInputError, createAuthService } from '../features/auth/auth.service.js';
import type { createCalendarAdmin } from '../features/calendar/calendar.admin.js';
import type { createWebhooksAdmin } from '../features/webhooks/webhooks.admin.js';
import { type Storage, openStorage } from '../storage/database.js';
import { FocusCommand, positiveInteger, repeatable, single } from './cli.parsing.js';

/** stdout carries only the JSON result; everything else goes to stderr. */
function print(result: unknown): void {
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

/** Opens the configured database, migrated unless told otherwise, for one command. */
async function withStorage<T>(fn: (storage: Storage, config: Config) => Promise<T>, options = { migrate: true }): Promise<T> {
  const config = loadConfig();
  prepareDatabaseLocation(config);
  const storage = openStorage({ ...config, poolSize: 2 });
  try {
    if (options.migrate) await storage.migrate();
    return await fn(storage, config);
  } finally {
    await storage.close();
  }
}

/** An administrative command: the user and token service over the configured, migrated database. */
const withAdmin = <T>(fn: (admin: AuthService) => Promise<T>) => withStorage((storage) => fn(createAuthService(storage)));

/** An operator's command over every user's webhooks or calendar feeds, with the user service to name users by handle. */
const withOperator = <T>(fn: (services: { admin: AuthService; webhooks: ReturnType<typeof createWebhooksAdmin>; feeds: ReturnType<typeof createCalendarAdmin> }) => Promise<T>) =>
  withStorage(async (storage) => {
    // Loaded by the commands that use them: each command is a process, and loading every feature took ~0.4 s of each.
    const [{ createWebhooksAdmin }, { createCalendarAdmin }] = await Promise.all([import('../features/webhooks/webhooks.admin.js'), import('../features/calendar/calendar.admin.js')]);
    return fn({ admin: createAuthService(storage), webhooks: createWebhooksAdmin(storage), feeds: createCalendarAdmin(storage) });
  });

/** `--user <handle>`: the user's id, or undefined for everyone's. */
const userIdOf = (admin: AuthService, handle: string | undefined) => (handle === undefined ? Promise.resolve(undefined) : admin.userIdOf(handle));

const prints = (shape: string) => `\nPrints ${shape} on stdout.`;

/** The first line of stdin (a password), refused from a terminal, where it would be echoed as typed. */
async function passwordFromStdin(): Promise<string> {
  if (process.stdin.isTTY) throw new AdminInputError("give the password on stdin, not typed here: read -rs P && printf '%s\\n' \"$P\" | npx focus users password <handle>");
  let text = '';
  for await (const chunk of process.stdin) {
    text += String(chunk);
    if (text.length > 4096) break;
  }
  return text.split(/\r?\n/)[0] ?? '';
}

/** What `users disable` and `users remove` stop, in their help. */
const OFFBOARDING = {
  disable:
    '\nTakes effect at once on every running instance: every token answers 401, open event streams end, webhooks get no further ' +
    'delivery (queued ones and retries included) and calendar feeds answer 404. See docs/deployment.md, "Off-boarding".',
  remove:
    "\nTakes effect at once on every running instance: the user's tokens no longer see the org's private sessions, open event streams " +
    "end (a reconnect carries the orgs left), webhooks get none of the org's events (queued ones included) and calendar feeds stop " +
    'showing its sessions. See docs/deployment.md, "Off-boarding".',
};

/** The `focus` command line: every command, its arguments and its help, nothing executed yet. */
export function buildProgram(): Command {
  const program = new FocusCommand('focus')
    .description(
      'Focus: timed focus sessions and tasks over HTTP, and the commands that administer it.\n' +
        'Each command prints only its JSON result on stdout; logs and errors go to stderr (one line, non-zero exit).',
    )
    .version(PACKAGE.version, '-v, --version', 'print the version and exit')
    .helpOption('-h, --help', 'print help and exit')
    .helpCommand('help [command]', 'print the help of a command (`focus help users`) and exit');

  addMigrate(program);
  addUsers(program);
  addInvite(program);
  addTokens(program);
  addOperatorCommands(program);
  addServe(program);
  program.addHelpText('after', () => `\n${commandSummary(program)}\n\n${environmentHelp()}`);
  return program;
}

function addMigrate(program: Command): void {
  program
    .command('migrate')
    .description('apply pending migrations (never destructive) to the database DATABASE_URL names')
    .addHelpText('after', prints('{"database":"<where>","applied":["0001_initial",…]}; applied is [] when up to date'))
    .action(async () => {
      // Not pre-migrated: the result lists what this run applied.
      const migrate = async (storage: Storage, config: Config) => ({
        database: describeDatabase(config.databaseUrl),
        applied: await storage.migrate(),
      });
      print(await withStorage(migrate, { migrate: false }));
    });
}

function addUsers(program: Command): void {
  const users = program.command('users').description('add, list, disable and remove users');
  users
    .command('add')
    .description('create a user and any missing org, or add orgs to an existing user (idempotent)')
    .argument('<handle>', '1–64 characters of a-z 0-9 . _ -')
    .requiredOption('--org <id>', 'an org id (positive integer); repeat for several orgs', repeatable(positiveInteger('org id')))
    .option(
      '--timezone <zone>',
      "the user's home time zone, an IANA name (Europe/Berlin): sessions they create without one take place in it; " +
        'default UTC for a new user, kept for an existing one',
      single('--timezone'),
    )
    .option('--admin', "make the user an admin of each org named: admins invite and remove the org's people")
    .addHelpText('after', prints('{"handle":"alice","org_ids":[1,2]}'))
    .action(async (handle: string, options: { org: number[]; timezone?: string; admin?: boolean }) =>
      print(await withAdmin((admin) => admin.addUser(handle, options.org, { timezone: options.timezone, admin: options.admin === true }))),
    );
  users
    .command('list')
    .description('list every user with their orgs, home time zone and whether they are disabled')
    .addHelpText('after', prints('{"data":[{"handle":"alice","org_ids":[1,2],"timezone":"Europe/Berlin","disabled":false},…]}'))
    .action(async () => print(await withAdmin((admin) => admin.listUsers())));
  users
    .command('disable')
    .description("off-board a user: refuse every token, end their event streams, stop their webhooks and calendar feeds (undo: users enable)")
    .argument('<handle>', 'the user to disable')
    .addHelpText('after', prints('{"handle":"alice","disabled":true}') + OFFBOARDING.disable)
    .action(async (handle: string) => print(await withAdmin((admin) => admin.setDisabled(handle, true))));
  users
    .command('enable')
    .description('undo users disable: the tokens, webhooks and feeds the user kept work again (what was queued meanwhile is not sent)')
    .argument('<handle>', 'the user to enable')
    .addHelpText('after', prints('{"handle":"alice","disabled":false}'))
    .action(async (handle: string) => print(await withAdmin((admin) => admin.setDisabled(handle, false))));
  users
    .command('email')
    .description('set the email single sign-on (OIDC_ISSUER) matches the user by, once the provider has verified it; --clear removes it')
    .argument('<handle>', 'the user')
    .argument('[address]', 'their email address (lower-cased)')
    .option('--clear', 'remove the email: single sign-on no longer finds the user')
    .addHelpText('after', prints('{"handle":"alice","email":"alice@example.com"|null}'))
    .action(async (handle: string, address: string | undefined, options: { clear?: boolean }) => {
      if ((address === undefined) !== (options.clear === true)) throw new AdminInputError('give an address or --clear, not both or neither');
      print(await withAdmin((admin) => admin.setEmail(handle, address ?? null)));
    });
  users
    .command('password')
    .description('set a password for someone who forgot theirs, read from stdin (never an argument: shell history and ps would keep it); their browser sessions end')
    .argument('<handle>', 'the user')
    .addHelpText('after', prints('{"handle":"alice"}') + "\nFor example: read -rs P && printf '%s\\n' \"$P\" | npx focus users password alice\nThey can change it in the web app's Settings.")
    .action(async (handle: string) => {
      const password = await passwordFromStdin();
      const { createAccountsAdmin } = await import('../features/accounts/accounts.public.js');
      print(await withStorage((storage) => createAccountsAdmin(storage).setPassword(handle, password)));
    });
  users
    .command('remove')
    .description("remove a user from an org: their tokens, streams, webhooks and feeds no longer carry that org's sessions")
    .argument('<handle>', 'the member to remove')
    .requiredOption('--org <id>', 'the org id (positive integer)', positiveInteger('org id'))
    .addHelpText('after', prints('{"handle":"alice","org_ids":[2]} (the orgs left)') + OFFBOARDING.remove)
    .action(async (handle: string, options: { org: number }) => print(await withAdmin((admin) => admin.removeMembership(handle, options.org))));
}

function addInvite(program: Command): void {
  program
    .command('invite')
    .description('make a one-time invitation link to an org (valid 7 days): whoever opens it chooses a handle and password')
    .argument('<org>', 'the org id (positive integer); the org must exist (`users add … --org`)', positiveInteger('org id'))
    .addHelpText('after', prints('{"id":1,"org_id":1,"url":"<PUBLIC_URL>/invite#…","expires_at":"…"}') + '\nThe link starts with PUBLIC_URL, or http://<HOST>:<PORT> when it is not set.')
    .action(async (org: number) => {
      const { createAccountsAdmin } = await import('../features/accounts/accounts.public.js');
      const made = await withStorage((storage, config) => {
        const base = config.publicUrl ?? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
        return createAccountsAdmin(storage).inviteFromCli(org, base);
      });
      if (made === undefined) throw new AdminInputError(`no org with id ${org}: create it with \`focus users add <handle> --org ${org} --admin\``);
      print(made);
    });
}

function addTokens(program: Command): void {
  const tokens = program.command('tokens').description('issue, list and revoke API tokens');
  tokens
    .command('issue')
    .description('issue a token for a user; it is shown once, only its hash is stored')
    .argument('<handle>', 'the user the token acts as')
    .option('--name <label>', 'a label to recognise the token by in `tokens list`', single('--name'))
    .option('--ttl <duration>', 'lifetime: a whole number and s, m, h, d or w (90s, 45m, 12h, 30d, 2w); default: never expires', single('--ttl'))
    .addHelpText('after', prints('{"id":1,"token":"fst_…","expires_at":"…"|null}'))
    .action(async (handle: string, options: { name?: string; ttl?: string }) =>
      print(await withAdmin((admin) => admin.issueToken(handle, options))),
    );
  tokens
    .command('list')
    .description("list tokens (every user's, or one user's): never the token or its hash")
    .argument('[handle]', 'only this user’s tokens')
    .addHelpText('after', prints('{"data":[{"id","handle","name","created_at","expires_at","last_used_at","revoked"},…]}'))
    .action(async (handle: string | undefined) => print(await withAdmin((admin) => admin.listTokens(handle))));
  tokens
    .command('revoke')
    .description('revoke a token: it answers 401 from then on and its open event streams end, on every instance (revoking twice is fine)')
    .argument('<id>', 'the token id (from `tokens issue` or `tokens list`)', positiveInteger('token id'))
    .addHelpText('after', prints('{"id":1,"revoked":true}'))
    .action(async (id: number) => print(await withAdmin((admin) => admin.revokeToken(id))));
}

/** Commands an operator runs on any user's webhooks and feeds. */
function addOperatorCommands(program: Command): void {
  const webhooks = program.command('webhooks').description("list and delete users' webhooks (operators)");
  webhooks
    .command('list')
    .description("list every user's webhooks, or one user's: never a secret")
    .option('--user <handle>', 'only this user’s webhooks', single('--user'))
    .addHelpText('after', prints('{"data":[{"id":"1","handle":"alice","url","events":[…],"description","created_at"},…]}'))
    .action(async (options: { user?: string }) => print(await withOperator(async (s) => s.webhooks.list(await userIdOf(s.admin, options.user)))));
  webhooks
    .command('delete')
    .description('delete a webhook, whoever owns it: no further delivery, queued ones included')
    .argument('<id>', 'the webhook id (from `webhooks list`)', positiveInteger('webhook id'))
    .addHelpText('after', prints('{"id":"1","deleted":true}'))
    .action(async (id: number) => {
      if (!(await withOperator((s) => s.webhooks.delete(id)))) throw new AdminInputError(`no webhook with id ${id}`);
      print({ id: String(id), deleted: true });
    });

  const feeds = program.command('feeds').description("list and delete users' calendar feeds (operators)");
  feeds
    .command('list')
    .description("list every user's calendar feeds, or one user's: never a secret")
    .option('--user <handle>', 'only this user’s feeds', single('--user'))
    .addHelpText('after', prints('{"data":[{"id":1,"handle":"alice","name","created_at"},…]}'))
    .action(async (options: { user?: string }) => print(await withOperator(async (s) => s.feeds.list(await userIdOf(s.admin, options.user)))));
  feeds
    .command('delete')
    .description('revoke a calendar feed, whoever owns it: its URL answers 404 from then on')
    .argument('<id>', 'the feed id (from `feeds list`)', positiveInteger('feed id'))
    .addHelpText('after', prints('{"id":1,"deleted":true}'))
    .action(async (id: number) => {
      if (!(await withOperator((s) => s.feeds.delete(id)))) throw new AdminInputError(`no calendar feed with id ${id}`);
      print({ id, deleted: true });
    });
}

function addServe(program: Command): void {
  program
    .command('serve')
    .description('serve the API (what npm start runs); SIGTERM or SIGINT drain in-flight requests and exit 0')
    .addHelpText('after', `\n${environmentHelp()}`)
    .action(async () => {
      const config = loadConfig();
      prepareDatabaseLocation(config);
      // Loaded on demand: the admin commands need no HTTP stack and start faster without it.
      const { startServer } = await import('../server.js');
      await startServer(config);
    });
}

/** Every command that does something, with its arguments: the whole CLI at a glance. */
function commandSummary(program: Command): string {
  const leaves = (c: Command, path: string[]): string[] =>
    c.commands.length === 0
      ? [`  focus ${[...path, c.name()].join(' ')} ${c.usage().replace(/\[options\]\s*/, '')}`.trimEnd() + options(c)]
      : c.commands.flatMap((sub) => leaves(sub, c === program ? [] : [...path, c.name()]));
  const options = (c: Command) =>
    c.options
      .filter((o) => o.long !== '--help')
      .map((o) => (o.mandatory ? ` ${o.flags}` : ` [${o.flags}]`))
      .join('');
  return ['Commands in full (focus <command> --help tells more):', ...leaves(program, [])].join('\n');
}
