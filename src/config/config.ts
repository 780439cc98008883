import { type Static, Type } from 'typebox';
import { Value } from 'typebox/value';
import { TrustProxySchema, parseTrustProxy } from './trust-proxy.js';

const LogLevel = Type.Union(
  ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
);

export const ConfigSchema = Type.Object({
  databaseUrl: Type.String({ pattern: '^(sqlite:.+|postgres(ql)?://.+)$' }),
  port: Type.Integer({ minimum: 0, maximum: 65535 }),
  host: Type.String({ minLength: 1 }),
  logLevel: LogLevel,
  /** Requests per minute per token; 0 turns rate limiting off. */
  rateLimit: Type.Integer({ minimum: 0 }),
  redisUrl: Type.Union([Type.String({ pattern: '^rediss?://.+' }), Type.Null()]),
  /** Per-statement timeout on PostgreSQL, milliseconds. */
  statementTimeoutMs: Type.Integer({ minimum: 100 }),
  /** How long a request may wait for a pooled connection, milliseconds. */
  connectTimeoutMs: Type.Integer({ minimum: 100 }),
  poolSize: Type.Integer({ minimum: 1, maximum: 1000 }),
  /** Whom to believe in X-Forwarded-For: nobody (false), N proxy hops, or these proxy addresses/CIDRs. */
  trustProxy: TrustProxySchema,
  /** The request line and headers must arrive within this, milliseconds. */
  headersTimeoutMs: Type.Integer({ minimum: 100 }),
  /** The body must arrive within this after the headers, milliseconds. */
  bodyTimeoutMs: Type.Integer({ minimum: 100 }),
  /** After SIGTERM, in-flight requests get this long to finish before the process exits anyway, milliseconds. */
  drainTimeoutMs: Type.Integer({ minimum: 100 }),
});

export type Config = Static<typeof ConfigSchema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const integer = (raw: string | undefined, fallback: number): number | string =>
  raw === undefined || raw === '' ? fallback : /^-?\d+$/.test(raw) ? Number(raw) : raw;

/** Reads and validates the environment; throws ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const candidate = {
    databaseUrl: env.DATABASE_URL || 'sqlite:./data/focus.db',
    port: integer(env.PORT, 8080),
    host: env.HOST || '127.0.0.1',
    logLevel: env.LOG_LEVEL || 'info',
    rateLimit: integer(env.RATE_LIMIT, 600),
    redisUrl: env.REDIS_URL || null,
    statementTimeoutMs: integer(env.DB_STATEMENT_TIMEOUT_MS, 10_000),
    connectTimeoutMs: integer(env.DB_CONNECT_TIMEOUT_MS, 5_000),
    poolSize: integer(env.DB_POOL_SIZE, 10),
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    headersTimeoutMs: integer(env.HEADERS_TIMEOUT_MS, 30_000),
    bodyTimeoutMs: integer(env.BODY_TIMEOUT_MS, 30_000),
    drainTimeoutMs: integer(env.DRAIN_TIMEOUT_MS, 10_000),
  };
  if (!Value.Check(ConfigSchema, candidate)) {
    const names: Record<string, string> = {
      databaseUrl: 'DATABASE_URL (sqlite:<path>, sqlite::memory: or postgres://…)',
      port: 'PORT (0–65535)',
      host: 'HOST',
      logLevel: 'LOG_LEVEL (fatal|error|warn|info|debug|trace|silent)',
      rateLimit: 'RATE_LIMIT (requests per minute, 0 = off)',
      redisUrl: 'REDIS_URL (redis://…)',
      statementTimeoutMs: 'DB_STATEMENT_TIMEOUT_MS (≥ 100)',
      connectTimeoutMs: 'DB_CONNECT_TIMEOUT_MS (≥ 100)',
      poolSize: 'DB_POOL_SIZE (1–1000)',
      trustProxy: 'TRUST_PROXY (0, false, a hop count, or proxy addresses/CIDRs separated by commas)',
      headersTimeoutMs: 'HEADERS_TIMEOUT_MS (≥ 100)',
      bodyTimeoutMs: 'BODY_TIMEOUT_MS (≥ 100)',
      drainTimeoutMs: 'DRAIN_TIMEOUT_MS (≥ 100)',
    };
    const bad = [...Value.Errors(ConfigSchema, candidate)].map((e) => {
      const key = e.instancePath.replace(/^\//, '');
      return names[key] ?? key;
    });
    throw new ConfigError(`invalid configuration: ${[...new Set(bad)].join(', ')}`);
  }
  return candidate;
}
