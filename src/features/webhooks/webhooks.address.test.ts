import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { propertySeed } from '../../../test/helpers/seed.js';
import { embeddedIPv4, isInternalAddress } from './webhooks.address.js';

/*
 * Contract section 13, webhook destinations (issue 34, L4): every range docs/security.md
 * names is refused, and so is every IPv6 form that leads to a refused IPv4 address.
 */

const octets = (v: number) => [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255];
const hex = (v: number) => [(v >>> 16).toString(16), (v & 0xffff).toString(16)];
const dotted = (v: number) => octets(v).join('.');

/** The IPv6 forms that carry an IPv4 address `v` (Teredo: as its server and, obfuscated, as its client). */
function forms(v: number): string[] {
  const [hi, lo] = hex(v) as [string, string];
  const [xhi, xlo] = hex(~v >>> 0) as [string, string];
  return [
    `::${dotted(v)}`,
    `::${hi}:${lo}`,
    `::ffff:${dotted(v)}`,
    `::ffff:${hi}:${lo}`,
    `::ffff:0:${dotted(v)}`,
    `::ffff:0:${hi}:${lo}`,
    `0:0:0:0:0:ffff:${hi}:${lo}`,
    `2002:${hi}:${lo}::1`,
    `2002:${hi}:${lo}:1234:5678:9abc:def0:1`,
    `2001:0:${hi}:${lo}::${xhi}:${xlo}`,
    `2001:0:4136:e378:8000:63bf:${xhi}:${xlo}`,
  ];
}

/** One address of each refused IPv4 range, from docs/security.md. */
const REFUSED_V4 = ['0.1.2.3', '10.9.8.7', '100.64.0.1', '127.0.0.1', '169.254.169.254', '172.16.5.4', '192.0.0.8', '192.0.2.1', '192.88.99.1', '192.168.1.1', '198.18.0.1', '198.51.100.7', '203.0.113.9', '224.0.0.251', '240.0.0.1', '255.255.255.255'];
const REFUSED_V6 = ['::', '::1', 'fe80::1', 'fe80::1%eth0', 'fc00::1', 'fd12:3456::1', 'fec0::1', 'ff02::1', '100::1', '2001:db8::1', '2001:2::1', '2001:2:0:ffff::1', '3fff::1', '3fff:fff:ffff::1', '5f00::1', '64:ff9b::8.8.8.8', '64:ff9b:1::1'];
const PUBLIC_V4 = ['8.8.8.8', '1.1.1.1', '93.184.216.34', '192.0.1.1', '100.128.0.1', '172.32.0.1'];
const PUBLIC_V6 = ['2606:4700:4700::1111', '2001:4860:4860::8888', '2001:3::1', '4000::1', '2a00:1450::1'];

describe('webhooks: destinations refused', () => {
  it('refuses one address of every named range, IPv4 and IPv6', () => {
    for (const a of [...REFUSED_V4, ...REFUSED_V6]) expect(isInternalAddress(a), a).toBe(true);
    for (const a of [...PUBLIC_V4, ...PUBLIC_V6]) expect(isInternalAddress(a), a).toBe(false);
    for (const a of ['', 'localhost', '127.1', '::g', '1.2.3.4.5']) expect(isInternalAddress(a), a).toBe(true);
  });

  it('refuses the IPv4-compatible, -mapped, -translated, 6to4 and Teredo forms of a refused IPv4 address', () => {
    for (const v4 of REFUSED_V4) {
      const v = v4.split('.').reduce((n, o) => n * 256 + Number(o), 0);
      for (const form of forms(v)) expect(isInternalAddress(form), `${form} (${v4})`).toBe(true);
    }
    expect(isInternalAddress('::7f00:1')).toBe(true);
    expect(isInternalAddress('::ffff:0:7f00:1')).toBe(true);
  });

  it('reads the IPv4 address each form carries, for any address (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), (v) => {
        for (const form of forms(v)) expect(embeddedIPv4(form), form).toContain(dotted(v));
        // Refused exactly when the IPv4 address is: 6to4 and the mapped form judge only it.
        for (const form of [`::ffff:${dotted(v)}`, `2002:${hex(v).join(':')}::1`]) expect(isInternalAddress(form), form).toBe(isInternalAddress(dotted(v)));
      }),
      { seed: propertySeed(), numRuns: 300 },
    );
  });
});
