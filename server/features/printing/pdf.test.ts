import { describe, expect, it } from 'vitest';
import { MONO_ADVANCE_EM, PT_PER_MM, fitCaption } from './pdf.ts';

const box = { x: 10, y: 20, width: 30, height: 3 };
const widthOf = (chars: number, sizePt: number) => (chars * MONO_ADVANCE_EM * sizePt) / PT_PER_MM;

describe('fitCaption', () => {
  it('centres a short caption in its box at full size', () => {
    const fit = fitCaption('WM-001', box)!;
    expect(fit.text).toBe('WM-001');
    expect(fit.width).toBeCloseTo(widthOf(6, fit.sizePt));
    expect(fit.x + fit.width / 2).toBeCloseTo(25);
    expect(fit.baseline).toBeGreaterThan(20);
    expect(fit.baseline).toBeLessThan(23);
  });

  it('shrinks a longer caption to the box width', () => {
    const full = fitCaption('WM-001', box)!.sizePt;
    const fit = fitCaption('Boiler room, level 2', box)!;
    expect(fit.text).toBe('Boiler room, level 2');
    expect(fit.sizePt).toBeLessThan(full);
    expect(fit.width).toBeCloseTo(30);
  });

  it('cuts a caption with … once it would go below 4 pt', () => {
    const text = 'A very long node label that could never fit under a small code at a readable size';
    const fit = fitCaption(text, box)!;
    expect(fit.sizePt).toBe(4);
    expect(fit.text.endsWith('…')).toBe(true);
    expect(text.startsWith(fit.text.slice(0, -1))).toBe(true);
    expect(fit.width).toBeLessThanOrEqual(30);
  });

  it('draws nothing for an empty caption', () => {
    expect(fitCaption('', box)).toBeNull();
  });
});
