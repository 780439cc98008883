import { lookup } from 'node:dns';
import { promises as dns } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import type { LookupFunction } from 'node:net';

/**
 * Destinations a webhook may not reach unless private ones are allowed: loopback,
 * private, link-local, unique-local, CGNAT, multicast, unspecified, reserved and
 * documentation ranges, IPv4 and IPv6. net.BlockList also matches IPv4-mapped IPv6
 * addresses (`::ffff:127.0.0.1`) against the IPv4 rules.
 */
const INTERNAL = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
  ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) INTERNAL.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128], ['::1', 128], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001:db8::', 32],
  ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) INTERNAL.addSubnet(net, prefix, 'ipv6');
// An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is judged as the IPv4 address it carries.
const MAPPED = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

export function isInternalAddress(address: string): boolean {
  const mapped = MAPPED.exec(address);
  if (mapped?.[1] !== undefined) return isInternalAddress(mapped[1]);
  const family = isIP(address);
  if (family === 0) return true;
  return INTERNAL.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** Why a URL may not be a webhook's destination, or undefined when it may. */
export async function refuseUrl(raw: string, allowPrivate: boolean): Promise<string | undefined> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
  if (url.username !== '' || url.password !== '') return 'must not carry credentials';
  if (url.hash !== '') return 'must not have a fragment';
  if (allowPrivate) return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (isIP(host) !== 0) addresses = [host];
  else {
    try {
      addresses = (await dns.lookup(host, { all: true, verbatim: true })).map((a) => a.address);
    } catch {
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
 * The lookup a delivery's socket connects through: it resolves the host again and refuses
 * an internal answer, so a name that resolved to a public address at registration and to
 * an internal one now (DNS rebinding) never reaches inside. The socket connects to the
 * very address checked.
 */
export function checkedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true, verbatim: true }, (error, addresses) => {
      if (error !== null) return callback(error, '', 0);
      const list = addresses as unknown as { address: string; family: number }[];
      const usable = allowPrivate ? list : list.filter((a) => !isInternalAddress(a.address));
      if (usable.length === 0) return callback(new InternalAddressError(`${hostname} resolves to an internal address`), '', 0);
      if (options.all === true) return (callback as unknown as (e: null, a: typeof list) => void)(null, usable);
      const first = usable[0] as { address: string; family: number };
      callback(null, first.address, first.family);
    });
  };
}
