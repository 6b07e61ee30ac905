import type { Request } from 'express';
import { describe, expect, it } from 'vitest';
import { isLoopback } from './routes.ts';

const req = (remoteAddress: string | undefined, headers: Record<string, string> = {}) =>
  ({ socket: { remoteAddress }, headers }) as unknown as Request;

describe('NFC API: local console only', () => {
  it('accepts loopback peers (IPv4, IPv6, mapped)', () => {
    for (const a of ['127.0.0.1', '127.0.0.2', '::1', '::ffff:127.0.0.1']) expect(isLoopback(req(a))).toBe(true);
  });
  it('refuses LAN peers, even with a forwarded header claiming loopback', () => {
    for (const a of ['192.168.1.20', '10.0.0.5', '::ffff:192.168.1.20', 'fe80::1', undefined]) {
      expect(isLoopback(req(a, { 'x-forwarded-for': '127.0.0.1' }))).toBe(false);
    }
  });
});
