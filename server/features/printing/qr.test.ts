import { describe, expect, it } from 'vitest';
import { MIN_MODULE_MM, QUIET_ZONE_MODULES, darkRuns, fitQr, printableUrl, qrSymbol } from './qr.ts';

describe('printableUrl', () => {
  it('upper-cases scheme, host, /v/ and slug so the URL fits alphanumeric mode', () => {
    expect(printableUrl('https://scan.example.com/v/ab12cd34')).toBe('HTTPS://SCAN.EXAMPLE.COM/V/AB12CD34');
    expect(printableUrl('http://192.168.1.20:8787/v/K3M9QX2P')).toBe('HTTP://192.168.1.20:8787/V/K3M9QX2P');
  });

  it('leaves a path prefix in the scan base as it is', () => {
    expect(printableUrl('https://example.com/Field/Tags/v/ab12cd34')).toBe('HTTPS://EXAMPLE.COM/Field/Tags/V/AB12CD34');
  });

  it('leaves anything that is not a scan URL alone', () => {
    expect(printableUrl('https://example.com/other')).toBe('https://example.com/other');
  });
});

describe('qrSymbol', () => {
  it('encodes an upper-case scan URL in alphanumeric mode only', () => {
    const s = qrSymbol('HTTPS://SCAN.WAYMARK.EXAMPLE/V/K3M9QX2P', 'Q');
    expect(new Set(s.modes)).toEqual(new Set(['Alphanumeric']));
    expect(s.version).toBe(3); // 39 alphanumeric characters fit version 3 at Q (47)
    expect(s.size).toBe(29);
  });

  it('a lower-case URL needs byte mode and a larger symbol', () => {
    const lower = qrSymbol('https://scan.waymark.example/v/k3m9qx2p', 'Q');
    expect(lower.modes).toContain('Byte');
    expect(lower.version).toBeGreaterThan(3);
  });

  it('darkRuns cover exactly the dark modules', () => {
    const s = qrSymbol('HTTP://A.B/V/12345678', 'M');
    const back = new Uint8Array(s.size * s.size);
    for (const [r, c, len] of darkRuns(s)) for (let k = 0; k < len; k++) back[r * s.size + c + k] = 1;
    expect(back).toEqual(s.dark);
  });
});

describe('fitQr', () => {
  const url = 'HTTPS://SCAN.WAYMARK.EXAMPLE/V/K3M9QX2P';

  it('prefers Q when its modules are large enough', () => {
    const r = fitQr(url, 30);
    expect(r.ok && r.fit.symbol.ecLevel).toBe('Q');
    expect(r.ok && r.fit.moduleMm).toBeCloseTo(30 / (29 + 2 * QUIET_ZONE_MODULES));
  });

  it('falls back to M when only the smaller M symbol reaches the minimum module', () => {
    // 49 alphanumeric characters: version 4 at Q (capacity 47 at version 3), version 3 at M (61).
    const long = 'HTTPS://SCAN.WAYMARK-EXAMPLE.COM/SITES/V/K3M9QX2P';
    const q = qrSymbol(long, 'Q');
    const m = qrSymbol(long, 'M');
    expect(m.size).toBeLessThan(q.size);
    const side = (m.size + 2 * QUIET_ZONE_MODULES) * MIN_MODULE_MM + 0.1;
    const r = fitQr(long, side);
    expect(r.ok && r.fit.symbol.ecLevel).toBe('M');
  });

  it('reports the square needed when nothing fits', () => {
    const r = fitQr(url, 10);
    expect(r).toEqual({ ok: false, neededMm: (29 + 8) * MIN_MODULE_MM, version: 3 });
  });
});
