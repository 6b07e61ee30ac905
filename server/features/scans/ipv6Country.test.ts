import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ipv6Prefix64, loadIpv6CountryTable, parseIpv6Csv, tableFrom } from './ipv6Country.ts';

describe('IPv6 country table', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wm-v6-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads the upper 64 bits of every IPv6 text form and refuses what is not IPv6', () => {
    expect(ipv6Prefix64('2001:db8::1')).toEqual([0x20010db8, 0]);
    expect(ipv6Prefix64('2001:DB8:1:2:3:4:5:6')).toEqual([0x20010db8, 0x00010002]);
    expect(ipv6Prefix64('::')).toEqual([0, 0]);
    expect(ipv6Prefix64('::ffff:192.0.2.1')).toEqual([0, 0]);
    expect(ipv6Prefix64('fe80::1%eth0')).toEqual([0xfe800000, 0]);
    for (const bad of ['192.0.2.1', '2001:db8', '1::2::3', 'g::1', '', 'hello']) expect(ipv6Prefix64(bad)).toBeNull();
  });

  it('finds the range holding an address, and nothing between ranges', () => {
    const t = tableFrom(parseIpv6Csv('2001:4860::,2001:4860:ffff:ffff:ffff:ffff:ffff:ffff,US\n2003::,2003:1fff:ffff:ffff:ffff:ffff:ffff:ffff,DE\n'));
    expect(t.ranges).toBe(2);
    expect(t.lookup('2001:4860:4860::8888')).toBe('US');
    expect(t.lookup('2003:e3:ff00::1')).toBe('DE');
    expect(t.lookup('2003:1fff:ffff:ffff::1')).toBe('DE');
    expect(t.lookup('2003:2000::1')).toBeNull();
    expect(t.lookup('2001:4861::1')).toBeNull();
    expect(t.lookup('2000::1')).toBeNull();
    expect(t.lookup('192.0.2.1')).toBeNull();
  });

  it('builds its cache once from the shipped data, then reads it back with the same answers', () => {
    const built = loadIpv6CountryTable(dir);
    const file = join(dir, 'ipv6-country.bin');
    const mtime = statSync(file).mtimeMs;
    const cached = loadIpv6CountryTable(dir);
    expect(statSync(file).mtimeMs).toBe(mtime);
    expect(cached.ranges).toBe(built.ranges);
    expect(built.ranges).toBeGreaterThan(100_000);
    // Well-known allocations: Google (US), Deutsche Telekom (DE), Free (FR), China Telecom (CN).
    const samples = { '2001:4860:4860::8888': 'US', '2003:e3:ff00::1': 'DE', '2a01:e0a:1f2:3::77': 'FR', '240e:3a1::1': 'CN' };
    for (const [ip, cc] of Object.entries(samples)) {
      expect(built.lookup(ip), ip).toBe(cc);
      expect(cached.lookup(ip), ip).toBe(cc);
    }
    // Unique local, link-local and documentation addresses are nobody's country.
    for (const ip of ['fd00::1', 'fe80::1', '2001:db8::1', '::1']) expect(cached.lookup(ip), ip).toBeNull();
  });

  it('rebuilds a cache that is damaged or from another data version', () => {
    const file = join(dir, 'ipv6-country.bin');
    loadIpv6CountryTable(dir);
    const good = readFileSync(file);
    writeFileSync(file, good.subarray(0, good.length - 7));
    expect(loadIpv6CountryTable(dir).lookup('2003:e3:ff00::1')).toBe('DE');
    const other = Buffer.from(good);
    other.write('0.0.0-other\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0', 8, 'latin1');
    writeFileSync(file, other);
    expect(loadIpv6CountryTable(dir).lookup('2003:e3:ff00::1')).toBe('DE');
    expect(readFileSync(file).equals(good)).toBe(true);
  });
});
