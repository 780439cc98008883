import { isIP } from 'node:net';
import { isAbsolute, join, resolve, sep } from 'node:path';
import { isDnsName } from '../toolkit/web-address.js';
import { type TrustProxy, parseTrustProxy } from './trust-proxy.js';

/*
 * Every environment variable Focus reads, in one table: `loadConfig` parses with it, its
 * error messages name the variable with its `accepts` text, the CLI help and `.env.example`
 * are rendered from it, and a test holds the README's configuration table to it.
 */

/** The installation's root (where package.json is), from src/config or dist/config alike. */
export const PACKAGE_ROOT = resolve(import.meta.dirname, '..', '..');

/** Where the default database lives, inside the installation. */
export const DEFAULT_DATA_DIR = join(PACKAGE_ROOT, 'data');

export interface Variable<T> {
  readonly name: string;
  /** The value used when the variable is unset or empty, as it would be written; undefined: none. */
  readonly default?: string;
  /** What a valid value looks like; shown after the name when the value is rejected. */
  readonly accepts?: string;
  /** One paragraph of Markdown, for the README, the CLI help and .env.example. */
  readonly description: string;
  /** The value from the text (after the default is applied), or undefined when the text is invalid. */
  parse(raw: string | undefined): T | undefined;
}

const variable = <T>(v: Variable<T>): Variable<T> => v;

const DECIMAL = /^-?\d{1,16}$/;

const integer =
  (min: number, max = Number.MAX_SAFE_INTEGER) =>
  (raw: string | undefined): number | undefined => {
    if (raw === undefined || !DECIMAL.test(raw)) return undefined;
    const value = Number(raw);
    return Number.isSafeInteger(value) && value >= min && value <= max ? value : undefined;
  };

/** An IP address, or a DNS name that is not a mistyped IPv4 address (`999.1.1.1`), which would only fail after migrating. */
const isListenHost = (raw: string) => isIP(raw) !== 0 || (isDnsName(raw) && !/^[0-9.]+$/.test(raw));

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const inNodeModules = PACKAGE_ROOT.split(sep).includes('node_modules');

/**
 * A relative `sqlite:` path is resolved against the installation root, not the current
 * directory, so `npx focus` from any directory of the checkout opens the same file. In an
 * installed package (under node_modules) that directory is replaced by an upgrade, so there
 * a relative path is refused rather than storing data where it would be lost.
 */
function databaseUrl(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (/^postgres(ql)?:\/\/.+/.test(raw)) return raw;
  if (!/^sqlite:.+/.test(raw)) return undefined;
  const path = raw.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
  if (path === ':memory:' || isAbsolute(path)) return `sqlite:${path}`;
  if (inNodeModules) return undefined;
  return `sqlite:${resolve(PACKAGE_ROOT, path)}`;
}

/** An issuer: https, or http to a loopback host (a provider on the same machine, as in tests). */
function oidcIssuer(raw: string): string | undefined {
  if (!URL.canParse(raw)) return undefined;
  const url = new URL(raw);
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  return url.protocol === 'https:' || (url.protocol === 'http:' && loopback) ? raw : undefined;
}

export const VARIABLES = {
  databaseUrl: variable({
    name: 'DATABASE_URL',
    default: 'sqlite:./data/focus.db',
    accepts: inNodeModules
      ? 'sqlite:/absolute/path, sqlite::memory: or postgres://…; required where Focus is installed as a package, so that no data lives inside node_modules'
      : 'sqlite:<path>, sqlite::memory: or postgres://…',
    description:
      '`sqlite:<path>`, `sqlite::memory:` (gone when the process ends), or `postgres://user:password@host:5432/db` ' +
      '(`postgresql://` too). A relative path is relative to the installation (the directory holding ' +
      '`package.json`), whatever the current directory; an installed package (under `node_modules`) needs an ' +
      'absolute path. The file is created when missing, its directory never is (except the default `data/`)',
    parse: databaseUrl,
  }),
  port: variable({
    name: 'PORT',
    default: '8080',
    accepts: '0–65535',
    description: 'TCP port, 0–65535 (`0` picks a free port; the address is logged)',
    parse: integer(0, 65535),
  }),
  host: variable({
    name: 'HOST',
    default: '127.0.0.1',
    accepts: 'an IP address or a host name',
    description: 'Interface to listen on; `0.0.0.0` for all',
    parse: (raw) => (raw !== undefined && isListenHost(raw) ? raw : undefined),
  }),
  logLevel: variable({
    name: 'LOG_LEVEL',
    default: 'info',
    accepts: LOG_LEVELS.join('|'),
    description: `${LOG_LEVELS.slice(0, -1).map((l) => `\`${l}\``).join(', ')} or \`${LOG_LEVELS.at(-1)}\`; health probes log at \`debug\``,
    parse: (raw) => LOG_LEVELS.find((l) => l === raw),
  }),
  rateLimit: variable({
    name: 'RATE_LIMIT',
    default: '600',
    accepts: 'requests per minute, 0 = off',
    description:
      'Requests per minute per token (and per client address for requests without a valid token); `0` turns rate limiting off',
    parse: integer(0),
  }),
  redisUrl: variable<string | null>({
    name: 'REDIS_URL',
    accepts: 'redis://… or rediss://…',
    description:
      '`redis://…` or `rediss://…`: all instances share one rate-limit budget; unset, each instance counts on its own',
    parse: (raw) => (raw === undefined ? null : /^rediss?:\/\/.+/.test(raw) ? raw : undefined),
  }),
  poolSize: variable({
    name: 'DB_POOL_SIZE',
    default: '10',
    accepts: '1–1000',
    description: 'PostgreSQL connections per instance, 1–1000',
    parse: integer(1, 1000),
  }),
  connectTimeoutMs: variable({
    name: 'DB_CONNECT_TIMEOUT_MS',
    default: '5000',
    accepts: '≥ 100',
    description: 'How long a request waits for a PostgreSQL connection, milliseconds, ≥ 100',
    parse: integer(100),
  }),
  statementTimeoutMs: variable({
    name: 'DB_STATEMENT_TIMEOUT_MS',
    default: '10000',
    accepts: '≥ 100',
    description: 'PostgreSQL per-statement timeout, milliseconds, ≥ 100',
    parse: integer(100),
  }),
  trustProxy: variable<TrustProxy>({
    name: 'TRUST_PROXY',
    accepts: '0, false, a hop count, or proxy addresses/CIDRs separated by commas',
    description:
      'Whom to believe in `X-Forwarded-For` (client addresses for rate limits and logs). Unset, `0` or `false`: nobody. ' +
      'A number N (`true` = 1): N proxy hops, so the client is the N-th address from the right. A comma-separated list of ' +
      'proxy addresses or CIDRs (or `loopback`, `linklocal`, `uniquelocal`): the right-most address that is not a listed proxy. ' +
      'The client-chosen left-most entry never decides',
    parse: (raw) => {
      const parsed = parseTrustProxy(raw);
      return typeof parsed === 'string' || (typeof parsed === 'number' && parsed > 100) ? undefined : parsed;
    },
  }),
  publicUrl: variable<string | null>({
    name: 'PUBLIC_URL',
    accepts: 'an http(s) URL without query or fragment',
    description:
      'The address clients reach this server at (e.g. `https://focus.example.com`), when it is behind a proxy that changes it. ' +
      'Links in answers start with it: a problem’s `type` is `<PUBLIC_URL>/problems/<slug>`. Unset: the request’s own scheme and `Host`',
    parse: (raw) => {
      if (raw === undefined) return null;
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        return undefined;
      }
      if (!/^https?:$/.test(url.protocol) || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') return undefined;
      return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
    },
  }),
  oidcIssuer: variable<string | null>({
    name: 'OIDC_ISSUER',
    accepts: 'an https URL (http only for a loopback host)',
    description:
      'Single sign-on with an OpenID Connect provider: its issuer URL (discovery reads `<issuer>/.well-known/openid-configuration` once per process). ' +
      'Set together with `OIDC_CLIENT_ID` and `OIDC_CLIENT_SECRET`; the client’s redirect URI is `<PUBLIC_URL>/auth/oidc/callback`. Unset: no single sign-on',
    parse: (raw) => (raw === undefined ? null : oidcIssuer(raw)),
  }),
  oidcClientId: variable<string | null>({
    name: 'OIDC_CLIENT_ID',
    description: 'The client id Focus has at the `OIDC_ISSUER` provider',
    parse: (raw) => raw ?? null,
  }),
  oidcClientSecret: variable<string | null>({
    name: 'OIDC_CLIENT_SECRET',
    description: 'That client’s secret (sent with HTTP Basic authentication to the token endpoint)',
    parse: (raw) => raw ?? null,
  }),
  headersTimeoutMs: variable({
    name: 'HEADERS_TIMEOUT_MS',
    default: '30000',
    accepts: '≥ 100',
    description: 'The request line and headers must arrive within this many milliseconds (408 problem+json, connection closed)',
    parse: integer(100),
  }),
  bodyTimeoutMs: variable({
    name: 'BODY_TIMEOUT_MS',
    default: '30000',
    accepts: '≥ 100',
    description: 'The body must arrive within this many milliseconds after the headers (408 problem+json, connection closed)',
    parse: integer(100),
  }),
  webhookAllowPrivate: variable({
    name: 'WEBHOOK_ALLOW_PRIVATE',
    default: '0',
    accepts: '0 or 1',
    description:
      'With `1`, webhooks may deliver to loopback, private, link-local and other internal addresses (tests, or receivers on your own network); ' +
      'with `0` such destinations are refused at registration (422) and at every delivery, so a webhook cannot reach inside your network',
    parse: (raw) => (raw === '1' ? true : raw === '0' ? false : undefined),
  }),
  webhookRetryScale: variable({
    name: 'WEBHOOK_RETRY_SCALE',
    default: '1',
    accepts: 'a number > 0 and ≤ 1',
    description:
      'For tests only: multiplies the webhook retry delays (5 s, 20 s, 2 min, 10 min, 1 h, 6 h, 24 h), so that a test sees every retry in seconds; leave it at `1`',
    parse: (raw) => {
      if (raw === undefined || !/^\d+(\.\d+)?$/.test(raw)) return undefined;
      const value = Number(raw);
      return value > 0 && value <= 1 ? value : undefined;
    },
  }),
  webhookDnsServers: variable<string[]>({
    name: 'WEBHOOK_DNS_SERVERS',
    accepts: 'IP addresses with an optional port, comma-separated (IPv6 with a port in brackets)',
    description:
      'The DNS servers webhook destinations are resolved with, at registration and before each delivery (e.g. `10.0.0.2,[2001:db8::53]:5353`); ' +
      'unset, the system\'s. `/etc/hosts` is not read for webhook hosts; each lookup has 1.5 s',
    parse: (raw) => {
      if (raw === undefined) return [];
      const servers = raw.split(',').map((s) => s.trim());
      // 10.0.0.2, 10.0.0.2:53, 2001:db8::53, [2001:db8::53]:53: what dns.setServers takes.
      const valid = (s: string) => {
        const [, host = s, port] = /^\[(.+)\]:(\d{1,5})$/.exec(s) ?? /^(\d+\.\d+\.\d+\.\d+):(\d{1,5})$/.exec(s) ?? [];
        return isIP(host) !== 0 && (port === undefined || Number(port) <= 65535);
      };
      return servers.every(valid) ? servers : undefined;
    },
  }),
  drainTimeoutMs: variable({
    name: 'DRAIN_TIMEOUT_MS',
    default: '10000',
    accepts: '≥ 100',
    description: 'After `SIGTERM`/`SIGINT`, in-flight requests get this many milliseconds to finish; then the process exits anyway',
    parse: integer(100),
  }),
  eventsHeartbeatMs: variable({
    name: 'EVENTS_HEARTBEAT_MS',
    default: '15000',
    accepts: '100–15000',
    description: 'An event stream (`GET /api/v1/events`) without events gets a comment line this often, milliseconds, 100–15000',
    parse: integer(100, 15_000),
  }),
  eventsPollMs: variable({
    name: 'EVENTS_POLL_MS',
    default: '250',
    accepts: '50–1000',
    description:
      'How often an instance with open event streams reads the change log and the occurrence index for them, milliseconds, 50–1000',
    parse: integer(50, 1_000),
  }),
  eventsMaxStreams: variable({
    name: 'EVENTS_MAX_STREAMS',
    default: '2000',
    accepts: '0–100000',
    description: 'Event streams one instance keeps open at most (beyond: 429 `too-many-streams`); `0` turns the event stream off',
    parse: integer(0, 100_000),
  }),
  eventsStreamsPerToken: variable({
    name: 'EVENTS_STREAMS_PER_TOKEN',
    default: '5',
    accepts: '1–1000',
    description: 'Event streams one token may hold open on one instance at once (beyond: 429 `too-many-streams`), 1–1000',
    parse: integer(1, 1_000),
  }),
} as const;

type Parsed<V> = V extends Variable<infer T> ? T : never;

/** The configuration, one field per variable of the table. */
export type Config = { -readonly [K in keyof typeof VARIABLES]: Parsed<(typeof VARIABLES)[K]> };
