#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config/config.js';
import { AdminInputError, type AuthService, createAuthService } from '../features/auth/auth.service.js';
import { openStorage } from '../storage/database.js';

const USAGE = `usage: focus <command>
  migrate                                         apply pending migrations
  users add <handle> --org <id> [--org <id> …]    create a user (and orgs), or add orgs to one
  tokens issue <handle> [--name <label>] [--ttl 30d]
  tokens revoke <id>
  serve                                           serve the API (what npm start runs)
Configuration comes from the environment: DATABASE_URL, PORT, HOST, LOG_LEVEL, RATE_LIMIT, REDIS_URL.
Results are JSON on stdout; messages and logs go to stderr.`;

class UsageError extends Error {}

/** stdout carries only the JSON result; everything else goes to stderr. */
function print(result: unknown): void {
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

/** Opens storage from config (migrated), hands fn the admin service, closes it again. */
async function withAdmin<T>(fn: (admin: AuthService) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const storage = openStorage({ ...config, poolSize: 2 });
  try {
    await storage.migrate();
    return await fn(createAuthService(storage));
  } finally {
    await storage.close();
  }
}

/** Applies pending migrations; the result lists what this run applied. */
async function migrate(): Promise<string[]> {
  const storage = openStorage({ ...loadConfig(), poolSize: 2 });
  try {
    return await storage.migrate();
  } finally {
    await storage.close();
  }
}

/** A positive integer from its decimal text; anything else is reported as typed. */
function positiveInteger(raw: string, what: string): number {
  const value = /^\d{1,16}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < 1) throw new AdminInputError(`${what} must be a positive integer: ${raw}`);
  return value;
}

async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      org: { type: 'string', multiple: true },
      name: { type: 'string' },
      ttl: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, sub, arg] = positionals;
  if (values.help === true) {
    process.stderr.write(`${USAGE}\n`);
    return;
  }
  if (command === undefined) throw new UsageError('missing command');
  const expectArgs = (n: number) => {
    if (positionals.length !== n) throw new UsageError(`wrong number of arguments for "${positionals.slice(0, 2).join(' ')}"`);
  };
  switch (`${command}${sub === undefined ? '' : ` ${sub}`}`) {
    case 'migrate': {
      expectArgs(1);
      // Not pre-migrated: the result lists what this run applied.
      print({ applied: await migrate() });
      return;
    }
    case 'users add': {
      expectArgs(3);
      const orgs = (values.org ?? []).map((o) => positiveInteger(o, 'org id'));
      print(await withAdmin((admin) => admin.addUser(arg as string, orgs)));
      return;
    }
    case 'tokens issue': {
      expectArgs(3);
      if (values.name !== undefined && values.name.trim() === '') throw new AdminInputError('--name must not be empty');
      print(await withAdmin((admin) => admin.issueToken(arg as string, { name: values.name, ttl: values.ttl })));
      return;
    }
    case 'tokens revoke': {
      expectArgs(3);
      const id = positiveInteger(arg as string, 'token id');
      print(await withAdmin((admin) => admin.revokeToken(id)));
      return;
    }
    case 'serve': {
      expectArgs(1);
      const config = loadConfig();
      // Loaded on demand: the admin commands need no HTTP stack and start faster without it.
      const { startServer } = await import('../server.js');
      await startServer(config);
      return;
    }
    default:
      throw new UsageError(`unknown command "${positionals.join(' ')}"`);
  }
}

function describeError(error: unknown): { message: string; known: boolean } {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof UsageError) return { message: `${message} (focus --help lists the commands)`, known: true };
  if (error instanceof AdminInputError || error instanceof ConfigError) return { message, known: true };
  if (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS')) {
    // node:util's own text suggests `--` tricks that do not apply here; keep its first sentence.
    return { message: `${message.split(/\.\s/)[0]?.replace(/\.$/, '')} (focus --help lists the commands)`, known: true };
  }
  return { message: `failed: ${message}`, known: false };
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const { message, known } = describeError(error);
  // One line, whatever the error text holds: scripts read the first line of stderr.
  process.stderr.write(`focus: ${message.replace(/\s*\n\s*/g, ' ')}\n`);
  process.exit(known ? 2 : 1);
});
