#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config/config.js';
import { AdminInputError, addUser, issueToken, revokeToken } from '../features/auth/auth.service.js';
import { startServer } from '../server.js';
import { type Storage, openStorage } from '../storage/database.js';
import { migrateToLatest } from '../storage/migrator.js';

const USAGE = `usage: focus <command>
  migrate                                         apply pending migrations
  users add <handle> --org <id> [--org <id> …]    create a user (and orgs), or add orgs to one
  tokens issue <handle> [--name <label>] [--ttl 30d]
  tokens revoke <id>
  serve                                           serve the API (what npm start runs)
Configuration comes from the environment: DATABASE_URL, PORT, HOST, LOG_LEVEL, RATE_LIMIT, REDIS_URL.`;

class UsageError extends Error {}

/** stdout carries only the JSON result; everything else goes to stderr. */
function print(result: unknown): void {
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

async function withStorage<T>(fn: (storage: Storage) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const storage = openStorage(config.databaseUrl, { connectTimeoutMs: config.connectTimeoutMs, poolSize: 2 });
  try {
    await migrateToLatest(storage);
    return await fn(storage);
  } finally {
    await storage.close();
  }
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
  if (values.help === true || command === undefined) {
    process.stderr.write(`${USAGE}\n`);
    if (command === undefined && values.help !== true) process.exitCode = 2;
    return;
  }
  const expectArgs = (n: number) => {
    if (positionals.length !== n) throw new UsageError(`wrong number of arguments for "${positionals.slice(0, 2).join(' ')}"`);
  };
  switch (`${command}${sub === undefined ? '' : ` ${sub}`}`) {
    case 'migrate': {
      expectArgs(1);
      print({ applied: await withStorage(migrateToLatest) });
      return;
    }
    case 'users add': {
      expectArgs(3);
      const orgs = (values.org ?? []).map((o) => (/^\d+$/.test(o) ? Number(o) : Number.NaN));
      print(await withStorage((s) => addUser(s, arg as string, orgs)));
      return;
    }
    case 'tokens issue': {
      expectArgs(3);
      print(await withStorage((s) => issueToken(s, arg as string, { name: values.name, ttl: values.ttl })));
      return;
    }
    case 'tokens revoke': {
      expectArgs(3);
      const id = /^\d+$/.test(arg as string) ? Number(arg) : Number.NaN;
      print(await withStorage((s) => revokeToken(s, id)));
      return;
    }
    case 'serve': {
      expectArgs(1);
      await startServer(loadConfig());
      return;
    }
    default:
      throw new UsageError(`unknown command "${positionals.join(' ')}"`);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const known = error instanceof UsageError || error instanceof AdminInputError || error instanceof ConfigError ||
    (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS'));
  const message = error instanceof Error ? error.message : String(error);
  const hint = error instanceof UsageError ? ' (focus --help lists the commands)' : '';
  process.stderr.write(`focus: ${known ? message : `failed: ${message}`}${hint}\n`);
  process.exit(known ? 2 : 1);
});
