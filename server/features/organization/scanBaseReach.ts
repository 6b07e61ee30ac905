import { isIP } from 'node:net';

/**
 * Who can open a scan URL on this scan base: `loopback` only this machine (no phone ever can),
 * `lan` phones on the same network (a private address or a .local name), `public` anyone.
 */
export type ScanBaseReach = 'loopback' | 'lan' | 'public';

export function scanBaseReach(scanBase: string): ScanBaseReach {
  let host: string;
  try {
    host = new URL(scanBase).hostname.toLowerCase();
  } catch {
    return 'public';
  }
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host === 'localhost' || host.endsWith('.localhost')) return 'loopback';
  if (isIP(host) === 4) return ipv4Reach(host);
  if (isIP(host) === 6) return ipv6Reach(host);
  if (host.endsWith('.local') || !host.includes('.')) return 'lan';
  return 'public';
}

function ipv4Reach(ip: string): ScanBaseReach {
  const [a, b] = ip.split('.').map(Number) as [number, number];
  if (a === 127 || a === 0) return 'loopback';
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 169 && b === 254) || (a === 100 && b >= 64 && b <= 127)) return 'lan';
  return 'public';
}

function ipv6Reach(ip: string): ScanBaseReach {
  if (ip === '::1' || ip === '::') return 'loopback';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(ip);
  if (mapped) return ipv4Reach(mapped[1]!);
  // ::ffff:7f00:1 is how URL writes ::ffff:127.0.0.1
  const mappedHex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(ip);
  if (mappedHex) {
    const hi = parseInt(mappedHex[1]!, 16);
    const lo = parseInt(mappedHex[2]!, 16);
    return ipv4Reach(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`);
  }
  if (/^f[cd]/.test(ip) || /^fe[89ab]/.test(ip)) return 'lan';
  return 'public';
}
