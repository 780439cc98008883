import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { type Config, DEFAULT_DATA_DIR, VARIABLES, type Variable } from './config.variables.js';

export type { Config } from './config.variables.js';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** How a rejected variable is named in the message: `PORT (0–65535)`. */
export const variableLabel = (v: Variable<unknown>): string => (v.accepts === undefined ? v.name : `${v.name} (${v.accepts})`);

/** Reads and validates the environment; throws one ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const config: Record<string, unknown> = {};
  const bad: string[] = [];
  for (const [key, v] of Object.entries(VARIABLES) as [string, Variable<unknown>][]) {
    const given = env[v.name];
    const value = v.parse(given === undefined || given === '' ? v.default : given);
    if (value === undefined) bad.push(variableLabel(v));
    config[key] = value;
  }
  if (bad.length > 0) throw new ConfigError(`invalid configuration: ${bad.join(', ')}`);
  const sso = [VARIABLES.oidcIssuer, VARIABLES.oidcClientId, VARIABLES.oidcClientSecret];
  const set = sso.filter((v) => env[v.name] !== undefined && env[v.name] !== '');
  if (set.length !== 0 && set.length !== sso.length) throw new ConfigError(`invalid configuration: ${sso.map((v) => v.name).join(', ')} are set together or not at all`);
  return config as Config;
}

/** The file a `sqlite:` URL names (absolute, as loadConfig leaves it), or undefined for PostgreSQL and memory. */
export function sqliteFile(databaseUrl: string): string | undefined {
  if (!databaseUrl.startsWith('sqlite:')) return undefined;
  const path = databaseUrl.slice('sqlite:'.length);
  return path === ':memory:' ? undefined : path;
}

/** The database a URL names, safe to log: a PostgreSQL password never reaches a log line. */
export function describeDatabase(url: string): string {
  if (!/^postgres(ql)?:\/\//.test(url)) return url;
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    // `options` can carry settings, not secrets, but keep the line short.
    parsed.search = '';
    return parsed.toString();
  } catch {
    return 'postgres://(unparseable URL)';
  }
}

/**
 * Before a SQLite file is opened: the default `data/` directory of the installation is
 * created on first use; any other missing directory is an error, because a mistyped path
 * would otherwise create directories and a new, empty database where nobody looks.
 */
export function prepareDatabaseLocation(config: Config): void {
  const file = sqliteFile(config.databaseUrl);
  if (file === undefined) return;
  const dir = dirname(file);
  if (existsSync(dir)) return;
  if (dir === DEFAULT_DATA_DIR) {
    mkdirSync(dir);
    return;
  }
  throw new ConfigError(
    `invalid configuration: DATABASE_URL names a file in ${dir}, which does not exist (Focus creates the database file, not its directory)`,
  );
}
