import { BlockList, isIP } from 'node:net';

/**
 * Addresses a public instance must not call: loopback, private (RFC 1918, ULA), link-local
 * (which holds the cloud metadata address 169.254.169.254), CGNAT, unspecified, multicast,
 * reserved and documentation ranges. IPv6 forms that carry an IPv4 address are judged by that
 * address (see `embeddedIPv4`).
 */
export function createPrivateAddressList(): BlockList {
  const list = new BlockList();
  for (const [net, prefix] of [
    ['0.0.0.0', 8],
    ['10.0.0.0', 8],
    ['100.64.0.0', 10],
    ['127.0.0.0', 8],
    ['168.63.129.16', 32], // Azure's platform endpoint (metadata, DNS): a public address in name only
    ['169.254.0.0', 16],
    ['172.16.0.0', 12],
    ['192.0.0.0', 24],
    ['192.0.2.0', 24],
    ['192.88.99.0', 24],
    ['192.168.0.0', 16],
    ['198.18.0.0', 15],
    ['198.51.100.0', 24],
    ['203.0.113.0', 24],
    ['224.0.0.0', 4],
    ['240.0.0.0', 4],
  ] as const) {
    list.addSubnet(net, prefix, 'ipv4');
  }
  for (const [net, prefix] of [
    ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible ::a.b.c.d
    ['64:ff9b::', 96], // NAT64 (RFC 6052): reaches any IPv4 address through a translator
    ['64:ff9b:1::', 48], // NAT64 for local use (RFC 8215)
    ['100::', 64],
    ['2001::', 32], // Teredo: the client's IPv4 address is in there, obfuscated
    ['2001:2::', 48],
    ['2001:db8::', 32],
    ['3fff::', 20],
    ['fc00::', 7],
    ['fe80::', 10],
    ['fec0::', 10], // site-local (deprecated, still routed on some networks)
    ['ff00::', 8],
  ] as const) {
    list.addSubnet(net, prefix, 'ipv6');
  }
  return list;
}

/** The 16 bytes of an IPv6 address (any textual form, including a trailing dotted quad). */
function ipv6Bytes(ip: string): number[] | undefined {
  let text = ip.replace(/%.*$/, '');
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  const all = [...head, ...Array<string>(Math.max(fill, 0)).fill('0'), ...tail];
  if (all.length !== 8 || !all.every((g) => /^[0-9a-f]{1,4}$/i.test(g))) return undefined;
  return all.flatMap((g) => {
    const n = parseInt(g, 16);
    return [n >> 8, n & 0xff];
  });
}

/**
 * The IPv4 address an IPv6 address stands for, where it stands for one: IPv4-mapped
 * (::ffff:a.b.c.d, however written: `[::ffff:127.0.0.1]` reaches a URL as `[::ffff:7f00:1]`),
 * IPv4-compatible (::a.b.c.d), IPv4-translated (::ffff:0:a.b.c.d), NAT64 (64:ff9b::a.b.c.d)
 * and 6to4 (2002:AABB:CCDD::).
 */
export function embeddedIPv4(ip: string): string | undefined {
  const b = ipv6Bytes(ip);
  if (!b) return undefined;
  const zero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  const v4 = (at: number) => b.slice(at, at + 4).join('.');
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return v4(12);
  if (zero(0, 12)) return v4(12);
  if (zero(0, 8) && b[8] === 0xff && b[9] === 0xff && zero(10, 12)) return v4(12);
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zero(4, 12)) return v4(12);
  if (b[0] === 0x20 && b[1] === 0x02) return v4(2);
  return undefined;
}

/** True for an IP literal in a private, loopback or otherwise non-public range. */
export function isPrivateAddress(list: BlockList, address: string): boolean {
  const ip = address.replace(/^\[|\]$/g, '');
  const family = isIP(ip);
  if (family === 4) return list.check(ip, 'ipv4');
  if (family === 6) {
    const v4 = embeddedIPv4(ip);
    if (v4 !== undefined && list.check(v4, 'ipv4')) return true;
    return list.check(ip, 'ipv6');
  }
  return false;
}

/**
 * Whether a URL's host is obviously not public (an IP literal in a private range, or a
 * localhost name). DNS names are checked again when a delivery connects.
 */
export function isPrivateHost(list: BlockList, hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host)) return isPrivateAddress(list, host);
  // Numeric forms that resolvers read as IPv4 (e.g. 2130706433, 0x7f.1) are refused too.
  if (/^[0-9.x]+$/i.test(host) && /^(0x[0-9a-f]+|\d+)(\.(0x[0-9a-f]+|\d+)){0,3}$/i.test(host)) return true;
  return false;
}

/** Whether a listening address only accepts connections from this machine. */
export function isLoopbackListen(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) !== 6) return false;
  const b = ipv6Bytes(h)!;
  const loopback = b.slice(0, 15).every((x) => x === 0) && b[15] === 1;
  const mapped127 = b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff && b[12] === 127;
  return loopback || mapped127;
}
