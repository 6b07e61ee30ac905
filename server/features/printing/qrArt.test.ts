import { describe, expect, it } from 'vitest';
import { qrSymbol } from './qr.ts';
import { LOGO_MAX_MODULE_SHARE, composeArt, fitArt, logoSideModules } from './qrArt.ts';

const URL = 'HTTPS://W.EXAMPLE.COM/V/K3M9QX2P';

describe('styled QR geometry', () => {
  it('bounds the logo square well under what level H restores', () => {
    for (let version = 1; version <= 10; version++) {
      const size = 17 + 4 * version;
      const side = logoSideModules(size);
      expect(side % 2, `version ${version}`).toBe(1);
      expect((side * side) / (size * size)).toBeLessThanOrEqual(LOGO_MAX_MODULE_SHARE);
    }
  });

  it('leaves the logo square light and keeps it centred', () => {
    const symbol = qrSymbol(URL, 'H');
    const art = composeArt(symbol, { moduleStyle: 'square', logo: true, frameText: null, quietZone: 4 });
    const side = logoSideModules(symbol.size);
    const start = (symbol.size - side) / 2;
    expect(art.logo).toEqual({ x: 4 + start + 0.5, y: 4 + start + 0.5, side: side - 1 });
    // No module rectangle starts inside the cleared square.
    for (const m of art.modulesPath.matchAll(/M([\d.]+) ([\d.]+)h/g)) {
      const [c, r] = [Number(m[1]) - 4, Number(m[2]) - 4];
      expect(r >= start && r < start + side && c >= start && c < start + side, `module at ${r},${c}`).toBe(false);
    }
  });

  it('puts the frame outside the quiet zone and the call to action in its band', () => {
    const symbol = qrSymbol(URL, 'Q');
    const plain = composeArt(symbol, { moduleStyle: 'square', logo: false, frameText: null, quietZone: 4 });
    expect([plain.width, plain.height]).toEqual([symbol.size + 8, symbol.size + 8]);
    const framed = composeArt(symbol, { moduleStyle: 'rounded', logo: false, frameText: 'Scan me', quietZone: 4 });
    expect(framed.code.side).toBe(symbol.size + 8);
    expect(framed.width).toBe(framed.code.side + 3);
    expect(framed.height).toBeGreaterThan(framed.width);
    expect(framed.frame!.baseline).toBeGreaterThan(framed.code.y + framed.code.side);
    expect(framed.frame!.baseline).toBeLessThan(framed.height);
  });

  it('fits a code with a logo at level H only, and refuses a square too small for it', () => {
    const withLogo = fitArt(URL, 40, 0.5, { moduleStyle: 'dots', logo: true, frameText: null });
    expect(withLogo.ok && withLogo.art.symbol.ecLevel).toBe('H');
    const plain = fitArt(URL, 40, 0.5, { moduleStyle: 'square', logo: false, frameText: null });
    expect(plain.ok && plain.art.symbol.ecLevel).toBe('Q');
    const tooSmall = fitArt(URL, 15, 0.5, { moduleStyle: 'square', logo: true, frameText: 'Scan me' });
    expect(tooSmall.ok).toBe(false);
  });
});
