import { BadRequestError } from '../../platform/errors.ts';

/**
 * Least contrast between the dark modules and the background, as a WCAG 2 contrast ratio.
 * 4.5:1 is WCAG's AA level for text; it leaves room for what a phone camera adds to a clean
 * image (glare, shadow, a matte or glossy label, ink spreading into the paper), each of which
 * flattens contrast further. Below it, readers start failing in the field first.
 */
export const MIN_CONTRAST_RATIO = 4.5;

/** WCAG 2 relative luminance of `#RRGGBB`. */
export function relativeLuminance(hex: string): number {
  const channel = (i: number) => {
    const c = parseInt(hex.slice(1 + 2 * i, 3 + 2 * i), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(0) + 0.7152 * channel(1) + 0.0722 * channel(2);
}

export function contrastRatio(a: string, b: string): number {
  const [hi, lo] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

/** Rounded down, so the message never claims a ratio the refused pair does not reach. */
const shown = (ratio: number) => (Math.floor(ratio * 100) / 100).toFixed(2);

/**
 * Refuses colour pairs a reader may not decode: too little contrast, or light modules on a dark
 * background. Inverted codes are refused although some phone cameras read them: the QR standard
 * leaves reflectance reversal optional for decoders, and many readers (zbar, older apps,
 * handheld scanners) do not support it, so such a label fails for part of its audience.
 */
export function assertReadableColours(fg: string, bg: string): void {
  const ratio = contrastRatio(fg, bg);
  if (relativeLuminance(fg) > relativeLuminance(bg)) {
    throw new BadRequestError(
      `Colours fg ${fg} on bg ${bg} (contrast ${shown(ratio)}:1) make an inverted code: the modules are lighter than the background, and many QR readers cannot read that. Use a foreground darker than the background.`,
    );
  }
  if (ratio < MIN_CONTRAST_RATIO) {
    throw new BadRequestError(
      `Colours fg ${fg} on bg ${bg} have a contrast ratio of ${shown(ratio)}:1; QR codes need at least ${MIN_CONTRAST_RATIO}:1 to scan reliably. Darken the foreground or lighten the background.`,
    );
  }
}
