import { isIP } from 'node:net';

/*
 * TRUST_PROXY (contract section 6). The client address decides rate-limit budgets, so it
 * must never be what a client wrote into X-Forwarded-For itself: a proxy appends the
 * address it received the request from, so only entries counted from the right, as far
 * as trusted proxies wrote them, are believed.
 *
 * - unset, `0`, `false`: X-Forwarded-For is ignored (the socket's peer is the client);
 * - a positive integer N (`true` = 1): N proxy hops, so the client is the N-th address
 *   from the right of the list (the socket's peer being the last proxy);
 * - a comma-separated list of proxy addresses or CIDRs (or `loopback`, `linklocal`,
 *   `uniquelocal`): the client is the right-most address that is not a listed proxy.
 */
export type TrustProxy = false | number | string[];

const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isProxyAddress(entry: string): boolean {
  if (NAMED_RANGES.has(entry)) return true;
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/** The setting as Fastify's `trustProxy` takes it; anything unparseable comes back as the raw text, which the variable refuses. */
export function parseTrustProxy(raw: string | undefined): TrustProxy | string {
  const text = (raw ?? '').trim();
  if (text === '' || text === '0' || text.toLowerCase() === 'false') return false;
  if (text.toLowerCase() === 'true') return 1;
  if (/^\d+$/.test(text)) return Number(text);
  const entries = text.split(',').map((e) => e.trim());
  return entries.every(isProxyAddress) ? entries : text;
}

/** The setting as Fastify's `trustProxy` option: a hop count becomes proxy-addr's trust function (hop 0 is the socket's peer). */
export function fastifyTrustProxy(setting: TrustProxy): boolean | string[] | ((address: string, hop: number) => boolean) {
  return typeof setting === 'number' ? (_address, hop) => hop < setting : setting;
}

/**
 * The address in a forwarded entry without the port or brackets some proxies write
 * (`203.0.113.7:1001`, `[2001:db8::1]:443`, `[::ffff:203.0.113.7]`), so that one client
 * is one address whatever port its connection to the proxy came from.
 */
export function addressOnly(entry: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(entry);
  if (bracketed?.[1] !== undefined && isIP(bracketed[1]) === 6) return bracketed[1];
  const v4 = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(entry);
  return v4?.[1] !== undefined && isIP(v4[1]) === 4 ? v4[1] : entry;
}
