/**
 * WCAG 2.1 contrast for the scan pages' colours: a page's accent (a microsite's theme colour, or
 * the default blue) is used as is for bands and filled buttons, but text and outlines drawn in it
 * (links, outline buttons) get a variant lightened or darkened until it reaches 4.5:1 against
 * the backgrounds of the scheme it is shown in.
 */

type Rgb = [number, number, number];

function parseHex(hex: string): Rgb {
  const n = Number.parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

function toHex([r, g, b]: Rgb): string {
  return `#${[r, g, b].map((c) => Math.round(c).toString(16).padStart(2, '0')).join('')}`;
}

/** Relative luminance (WCAG 2.1, sRGB). */
function luminance(hex: string): number {
  const [r, g, b] = parseHex(hex).map((c) => {
    const s = c / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  }) as Rgb;
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** Contrast ratio of two #rrggbb colours, 1 to 21. */
export function contrastRatio(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

/**
 * `color` itself when it reaches `min` against every background, else the first mix of it with
 * white (dark backgrounds) or black (light backgrounds), in steps of 5 %, that does.
 */
export function readableOn(color: string, backgrounds: readonly string[], min = 4.5): string {
  const ok = (c: string) => backgrounds.every((bg) => contrastRatio(c, bg) >= min);
  if (ok(color)) return color;
  const darkBackground = backgrounds.every((bg) => luminance(bg) < 0.18);
  const target: Rgb = darkBackground ? [255, 255, 255] : [0, 0, 0];
  const from = parseHex(color);
  for (let step = 1; step <= 20; step++) {
    const t = step / 20;
    const mixed = toHex(from.map((c, i) => c + (target[i]! - c) * t) as Rgb);
    if (ok(mixed)) return mixed;
  }
  return toHex(target);
}

/** White or near-black text on a filled `background`, whichever contrasts more. */
export function textOn(background: string, dark = '#1b1c1f'): string {
  return contrastRatio('#ffffff', background) >= contrastRatio(dark, background) ? '#ffffff' : dark;
}
