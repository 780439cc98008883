import { Resolver } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import type { LookupFunction } from 'node:net';

/**
 * Destinations a webhook may not reach unless private ones are allowed: loopback,
 * private, link-local, unique-local, CGNAT, multicast, unspecified, reserved, benchmarking
 * and documentation ranges, IPv4 and IPv6 (IANA's special-purpose registries).
 */
const INTERNAL_V4 = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) INTERNAL_V4.addSubnet(net, prefix, 'ipv4');
const INTERNAL_V6 = new BlockList();
for (const [net, prefix] of [
  ['::', 128], ['::1', 128], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001:2::', 48], ['2001:db8::', 32],
  ['3fff::', 20], ['5f00::', 16], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) INTERNAL_V6.addSubnet(net, prefix, 'ipv6');

/** The eight 16-bit groups of a valid IPv6 address (isIP said 6), an IPv4 tail included. */
function groupsOf(address: string): number[] {
  let text = address;
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (tail !== null) {
    const [a, b, c, d] = tail.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', rest] = text.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16)));
  const left = parse(head);
  const right = rest === undefined ? [] : parse(rest);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

const dotted = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/**
 * The IPv4 addresses an IPv6 address leads to: IPv4-compatible (`::a.b.c.d`), -mapped
 * (`::ffff:a.b.c.d`) and -translated (`::ffff:0:a.b.c.d`) forms, 6to4 (`2002:AABB:CCDD::/48`)
 * and Teredo (`2001:0:server:…:~client`, the client obfuscated). NAT64 prefixes are
 * refused whole.
 */
export function embeddedIPv4(address: string): string[] {
  const g = groupsOf(address);
  const [g0, g1, g2, g3, g4, g5, g6, g7] = g as [number, number, number, number, number, number, number, number];
  const out: string[] = [];
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0) {
    if (g4 === 0 && (g5 === 0 || g5 === 0xffff)) out.push(dotted(g6, g7));
    if (g4 === 0xffff && g5 === 0) out.push(dotted(g6, g7));
  }
  if (g0 === 0x2002) out.push(dotted(g1, g2));
  if (g0 === 0x2001 && g1 === 0) out.push(dotted(g2, g3), dotted(g6 ^ 0xffff, g7 ^ 0xffff));
  return out;
}

/** Whether a webhook may not reach this address (one that is no IP address at all included). */
export function isInternalAddress(raw: string): boolean {
  // A zone (fe80::1%eth0) only says which interface: the address decides.
  const address = raw.split('%')[0] ?? '';
  const family = isIP(address);
  if (family === 4) return INTERNAL_V4.check(address, 'ipv4');
  if (family !== 6) return true;
  return INTERNAL_V6.check(address, 'ipv6') || embeddedIPv4(address).some((v4) => INTERNAL_V4.check(v4, 'ipv4'));
}

/**
 * How long resolving a webhook's host may take, in the request that registers it and
 * before each delivery: a slow or silent DNS server costs this much at most (contract
 * section 13: no lookup holds a request slot for more than 2 s).
 */
export const LOOKUP_DEADLINE_MS = 1_500;

export class LookupTimeoutError extends Error {
  override name = 'LookupTimeoutError';
}

export interface ResolveOptions {
  /** WEBHOOK_DNS_SERVERS: the DNS servers asked (default: the system's). */
  dnsServers?: readonly string[];
  deadlineMs?: number;
}

type Address = { address: string; family: 4 | 6 };
const NO_ANSWER = new Set(['ENODATA', 'ENOTFOUND', 'ENONAME']);

/**
 * The addresses of a host name, A and AAAA, asked of DNS directly (c-ares, off the libuv
 * thread pool: getaddrinfo there cannot be cancelled, and four slow lookups would hold the
 * pool every file and crypto call of the process shares). Rejects with LookupTimeoutError
 * after the deadline, the queries cancelled. `localhost` names are loopback (RFC 6761).
 * /etc/hosts is not read.
 */
export function resolveHost(host: string, options: ResolveOptions = {}): Promise<Address[]> {
  const name = host.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) return Promise.resolve([{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }]);
  const deadline = options.deadlineMs ?? LOOKUP_DEADLINE_MS;
  const resolver = new Resolver({ timeout: deadline, tries: 1 });
  if (options.dnsServers !== undefined && options.dnsServers.length > 0) resolver.setServers([...options.dnsServers]);
  const ask = (family: 4 | 6) =>
    new Promise<Address[]>((resolve, reject) => {
      const done = (error: NodeJS.ErrnoException | null, addresses: string[]) => {
        if (error === null) resolve(addresses.map((address) => ({ address, family })));
        else if (NO_ANSWER.has(error.code ?? '')) resolve([]);
        else reject(error);
      };
      if (family === 4) resolver.resolve4(host, done);
      else resolver.resolve6(host, done);
    });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new LookupTimeoutError(`${host} did not resolve within ${deadline} ms`));
      resolver.cancel();
    }, deadline);
    Promise.all([ask(4), ask(6)]).then(
      ([v4, v6]) => {
        clearTimeout(timer);
        const all = [...v4, ...v6];
        if (all.length === 0) reject(Object.assign(new Error(`${host} has no address`), { code: 'ENOTFOUND' }));
        else resolve(all);
      },
      (error: Error) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** Why a URL may not be a webhook's destination, or undefined when it may. */
export function refuseUrlSyntax(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
  if (url.username !== '' || url.password !== '') return 'must not carry credentials';
  if (url.hash !== '') return 'must not have a fragment';
  return undefined;
}

/** Why a URL's host may not be a webhook's destination, resolving it within the deadline; undefined when it may. */
export async function refuseHost(raw: string, allowPrivate: boolean, options: ResolveOptions = {}): Promise<string | undefined> {
  if (allowPrivate) return undefined;
  const host = new URL(raw).hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (isIP(host) !== 0) addresses = [host];
  else {
    try {
      addresses = (await resolveHost(host, options)).map((a) => a.address);
    } catch (error) {
      if (error instanceof LookupTimeoutError) return `its host did not resolve within ${(options.deadlineMs ?? LOOKUP_DEADLINE_MS) / 1000} s; try again later`;
      return 'its host does not resolve';
    }
  }
  if (addresses.some(isInternalAddress)) return 'must not point to a loopback, private, link-local or other internal address';
  return undefined;
}

export class InternalAddressError extends Error {
  override name = 'InternalAddressError';
}

/**
 * The lookup a delivery's socket connects through: it resolves the host again (within the
 * deadline) and refuses an internal answer, so a name that resolved to a public address at
 * registration and to an internal one now (DNS rebinding) never reaches inside. The socket
 * connects to the very address checked.
 */
export function checkedLookup(allowPrivate: boolean, options: ResolveOptions = {}): LookupFunction {
  return (hostname, lookupOptions, callback) => {
    resolveHost(hostname, options).then(
      (found) => {
        const family = lookupOptions.family === 4 || lookupOptions.family === 'IPv4' ? 4 : lookupOptions.family === 6 || lookupOptions.family === 'IPv6' ? 6 : 0;
        const list = family === 0 ? found : found.filter((a) => a.family === family);
        const usable = allowPrivate ? list : list.filter((a) => !isInternalAddress(a.address));
        if (usable.length === 0) return callback(new InternalAddressError(`${hostname} resolves to no usable address`), '', 0);
        if (lookupOptions.all === true) return (callback as unknown as (e: null, a: Address[]) => void)(null, usable);
        const first = usable[0] as Address;
        callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}
