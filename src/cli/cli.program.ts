import { Command } from 'commander';
import { environmentHelp } from '../config/config.docs.js';
import { type Config, describeDatabase, loadConfig, prepareDatabaseLocation } from '../config/config.js';
import { PACKAGE } from '../config/config.package.js';
import { type AuthService, createAuthService } from '../features/auth/auth.service.js';
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

const prints = (shape: string) => `\nPrints ${shape} on stdout.`;

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

  const users = program.command('users').description('add and list users');
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
    .addHelpText('after', prints('{"handle":"alice","org_ids":[1,2]}'))
    .action(async (handle: string, options: { org: number[]; timezone?: string }) =>
      print(await withAdmin((admin) => admin.addUser(handle, options.org, { timezone: options.timezone }))),
    );
  users
    .command('list')
    .description('list every user with their orgs and home time zone')
    .addHelpText('after', prints('{"data":[{"handle":"alice","org_ids":[1,2],"timezone":"Europe/Berlin"},…]}'))
    .action(async () => print(await withAdmin((admin) => admin.listUsers())));

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
    .description('revoke a token: it answers 401 from then on (revoking twice is fine)')
    .argument('<id>', 'the token id (from `tokens issue` or `tokens list`)', positiveInteger('token id'))
    .addHelpText('after', prints('{"id":1,"revoked":true}'))
    .action(async (id: number) => print(await withAdmin((admin) => admin.revokeToken(id))));

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

  program.addHelpText('after', () => `\n${commandSummary(program)}\n\n${environmentHelp()}`);
  return program;
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
