import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';
import { fastifyTrustProxy, parseTrustProxy } from './trust-proxy.js';

describe('TRUST_PROXY', () => {
  it('reads off, hop counts and proxy lists as contract section 6 defines them', () => {
    for (const off of [undefined, '', '0', 'false', 'FALSE']) expect(parseTrustProxy(off)).toBe(false);
    expect(parseTrustProxy('true')).toBe(1);
    expect(parseTrustProxy('1')).toBe(1);
    expect(parseTrustProxy('3')).toBe(3);
    expect(parseTrustProxy('10.0.0.1, 10.0.0.0/8,::1,fd00::/8,loopback')).toEqual(['10.0.0.1', '10.0.0.0/8', '::1', 'fd00::/8', 'loopback']);
  });

  it('refuses anything else at start-up, naming the variable', () => {
    for (const bad of ['yes', '10.0.0.0/33', '10.0.0.1/8/1', 'proxy.internal', '1.2.3', '-1', '10.0.0.1,,']) {
      expect(() => loadConfig({ TRUST_PROXY: bad }), bad).toThrow(ConfigError);
      expect(() => loadConfig({ TRUST_PROXY: bad }), bad).toThrow(/TRUST_PROXY/);
    }
  });

  it('trusts exactly N hops: hop 0 is the socket peer, so the client is the N-th entry from the right', () => {
    const trust = fastifyTrustProxy(2) as (address: string, hop: number) => boolean;
    expect([0, 1, 2].map((hop) => trust('10.0.0.1', hop))).toEqual([true, true, false]);
  });
});
