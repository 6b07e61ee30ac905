import { BlockList, isIP } from 'node:net';

/**
 * Addresses a public instance must not call: loopback, private (RFC 1918, ULA), link-local,
 * CGNAT, unspecified, multicast, reserved and documentation ranges, and IPv4-mapped forms of them.
 */
export function createPrivateAddressList(): BlockList {
  const list = new BlockList();
  for (const [net, prefix] of [
    ['0.0.0.0', 8],
    ['10.0.0.0', 8],
    ['100.64.0.0', 10],
    ['127.0.0.0', 8],
    ['169.254.0.0', 16],
    ['172.16.0.0', 12],
    ['192.0.0.0', 24],
    ['192.0.2.0', 24],
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
    ['::', 128],
    ['::1', 128],
    ['64:ff9b::', 96],
    ['100::', 64],
    ['2001:db8::', 32],
    ['fc00::', 7],
    ['fe80::', 10],
    ['ff00::', 8],
  ] as const) {
    list.addSubnet(net, prefix, 'ipv6');
  }
  return list;
}

/** True for an IP literal in a private, loopback or otherwise non-public range. */
export function isPrivateAddress(list: BlockList, address: string): boolean {
  const ip = address.replace(/^\[|\]$/g, '');
  const family = isIP(ip);
  if (family === 4) return list.check(ip, 'ipv4');
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
    if (mapped) return list.check(mapped[1]!, 'ipv4');
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
