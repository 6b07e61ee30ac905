import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../../platform/errors.ts';
import { MIN_CONTRAST_RATIO, assertReadableColours, contrastRatio } from './contrast.ts';

describe('colour contrast of QR codes', () => {
  it('measures the WCAG 2 ratio', () => {
    expect(contrastRatio('#000000', '#FFFFFF')).toBeCloseTo(21, 5);
    expect(contrastRatio('#FFFFFF', '#000000')).toBeCloseTo(21, 5);
    expect(contrastRatio('#777777', '#777777')).toBe(1);
    // WCAG's own example pair: #767676 on white is the lightest grey at 4.5:1.
    expect(contrastRatio('#767676', '#FFFFFF')).toBeGreaterThanOrEqual(4.5);
    expect(contrastRatio('#777777', '#FFFFFF')).toBeLessThan(4.5);
  });

  it('accepts dark on light at the threshold and refuses below it, naming both colours and the ratio', () => {
    expect(() => assertReadableColours('#767676', '#FFFFFF')).not.toThrow();
    expect(() => assertReadableColours('#1D3557', '#F1FAEE')).not.toThrow();
    const err = (() => {
      try {
        assertReadableColours('#777777', '#FFFFFF');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as Error).message).toBe(
      `Colours fg #777777 on bg #FFFFFF have a contrast ratio of 4.47:1; QR codes need at least ${MIN_CONTRAST_RATIO}:1 to scan reliably. Darken the foreground or lighten the background.`,
    );
  });

  it('refuses inverted codes whatever their contrast', () => {
    expect(() => assertReadableColours('#FFFFFF', '#000000')).toThrow(/inverted/);
    expect(() => assertReadableColours('#FFFF00', '#000080')).toThrow(/#FFFF00 on bg #000080 \(contrast \d+\.\d\d:1\).*inverted/);
  });
});
