import type { ModuleStyle } from '../../schemas/qrStyle.ts';
import { CAP_HEIGHT_EM, MONO_ADVANCE_EM } from './captionFont.ts';
import { EC_LEVELS, LOGO_EC_LEVELS, QUIET_ZONE_MODULES, type QrSymbol, qrSymbol } from './qr.ts';

/**
 * The geometry of a styled code, in module units (1 = one module), shared by the SVG/PNG of the
 * QR endpoint, the label PDF and its SVG preview: each only paints these shapes, so what the
 * preview shows is what prints.
 */

/**
 * Share of the symbol's modules the logo may hide. Level H restores up to 30 % of damaged
 * codewords; a square over the centre touches more codewords than it hides modules (each
 * codeword is 8 modules in an irregular shape), and the printed code must still survive dirt
 * and scuffs, so the logo stays well under that: 8 % of the modules at most.
 */
export const LOGO_MAX_MODULE_SHARE = 0.08;
/** Frame border around the quiet zone, and the call-to-action band under the code (module units). */
const FRAME_BORDER = 1.5;
const FRAME_BAND_SHARE = 0.2;
const FRAME_BAND_MIN = 5;
/** Dots are a little smaller than a module so neighbours stay apart. */
const DOT_RADIUS = 0.45;
const ROUND_RADIUS = 0.5;

export interface Box {
  x: number;
  y: number;
  side: number;
}

export interface ArtFrame {
  /** The frame: everything outside the code block, as one path (fg). */
  path: string;
  text: string;
  fontSize: number;
  /** Centre of the text line and its baseline. */
  centerX: number;
  baseline: number;
}

export interface QrArt {
  symbol: QrSymbol;
  width: number;
  height: number;
  /** The code with its quiet zone (background colour). */
  code: Box;
  /** Every dark module (finder patterns included) as one path, filled with the foreground colour. */
  modulesPath: string;
  /** Where the logo image goes (its modules are left light), or null. */
  logo: Box | null;
  frame: ArtFrame | null;
}

export interface ArtOptions {
  moduleStyle: ModuleStyle;
  logo: boolean;
  frameText: string | null;
  quietZone: number;
}

const n = (v: number) => String(Math.round(v * 1000) / 1000);

/** Side (modules, odd so it centres on a module) of the square a logo may clear on a symbol of `size`. */
export function logoSideModules(size: number): number {
  let side = Math.floor(size * Math.sqrt(LOGO_MAX_MODULE_SHARE));
  if (side % 2 === 0) side -= 1;
  return Math.max(0, side);
}

/** A rectangle with rounded corners; `ccw` draws it the other way round (a hole under nonzero fill). */
function roundedRect(x: number, y: number, w: number, h: number, r: number, ccw = false): string {
  const a = (ex: number, ey: number) => `A${n(r)} ${n(r)} 0 0 ${ccw ? 0 : 1} ${n(ex)} ${n(ey)}`;
  if (!ccw) {
    return `M${n(x + r)} ${n(y)}H${n(x + w - r)}${a(x + w, y + r)}V${n(y + h - r)}${a(x + w - r, y + h)}H${n(x + r)}${a(x, y + h - r)}V${n(y + r)}${a(x + r, y)}Z`;
  }
  return `M${n(x + r)} ${n(y)}${a(x, y + r)}V${n(y + h - r)}${a(x + r, y + h)}H${n(x + w - r)}${a(x + w, y + h - r)}V${n(y + r)}${a(x + w - r, y)}Z`;
}

function rect(x: number, y: number, w: number, h: number, ccw = false): string {
  return ccw ? `M${n(x)} ${n(y)}v${n(h)}h${n(w)}v${n(-h)}Z` : `M${n(x)} ${n(y)}h${n(w)}v${n(h)}h${n(-w)}Z`;
}

/** A module square whose corners are rounded where no dark neighbour continues the shape. */
function roundedModule(x: number, y: number, tl: number, tr: number, br: number, bl: number): string {
  const arc = (r: number, ex: number, ey: number) => (r > 0 ? `A${r} ${r} 0 0 1 ${n(ex)} ${n(ey)}` : '');
  return (
    `M${n(x + tl)} ${n(y)}H${n(x + 1 - tr)}${arc(tr, x + 1, y + tr)}V${n(y + 1 - br)}${arc(br, x + 1 - br, y + 1)}` +
    `H${n(x + bl)}${arc(bl, x, y + 1 - bl)}V${n(y + tl)}${arc(tl, x + tl, y)}Z`
  );
}

function finderOrigins(size: number): [number, number][] {
  return [
    [0, 0],
    [size - 7, 0],
    [0, size - 7],
  ];
}

/**
 * Rounded finder patterns: the 7×7 ring and the 3×3 centre keep their exact module extents (a
 * reader finds them by the 1:1:3:1:1 run ratio across the middle, which rounded corners leave
 * intact); only the corners are softened.
 */
function roundedFinder(x: number, y: number): string {
  return roundedRect(x, y, 7, 7, 1.5) + roundedRect(x + 1, y + 1, 5, 5, 1, true) + roundedRect(x + 2, y + 2, 3, 3, 0.75);
}

function modulesPath(symbol: QrSymbol, style: ModuleStyle, ox: number, oy: number, cleared: Box | null): string {
  const { size, dark } = symbol;
  const inFinder = (r: number, c: number) => (r < 7 && c < 7) || (r < 7 && c >= size - 7) || (r >= size - 7 && c < 7);
  const inCleared = (r: number, c: number) => cleared !== null && c >= cleared.x && c < cleared.x + cleared.side && r >= cleared.y && r < cleared.y + cleared.side;
  const isDark = (r: number, c: number) => r >= 0 && c >= 0 && r < size && c < size && dark[r * size + c] === 1 && !inCleared(r, c);
  const parts: string[] = [];
  if (style === 'square') {
    // Runs along each row: one rectangle per run keeps the path (and the PDF) small.
    for (let r = 0; r < size; r++) {
      let c = 0;
      while (c < size) {
        if (!isDark(r, c)) {
          c++;
          continue;
        }
        const start = c;
        while (c < size && isDark(r, c)) c++;
        parts.push(rect(ox + start, oy + r, c - start, 1));
      }
    }
    return parts.join('');
  }
  for (const [fc, fr] of finderOrigins(size)) parts.push(roundedFinder(ox + fc, oy + fr));
  for (let r = 0; r < size; r++) {
    for (let c = 0; c < size; c++) {
      if (inFinder(r, c) || !isDark(r, c)) continue;
      const x = ox + c;
      const y = oy + r;
      if (style === 'dots') {
        const cx = x + 0.5;
        const cy = y + 0.5;
        parts.push(`M${n(cx - DOT_RADIUS)} ${n(cy)}a${DOT_RADIUS} ${DOT_RADIUS} 0 1 0 ${2 * DOT_RADIUS} 0a${DOT_RADIUS} ${DOT_RADIUS} 0 1 0 ${-2 * DOT_RADIUS} 0Z`);
        continue;
      }
      const up = isDark(r - 1, c);
      const down = isDark(r + 1, c);
      const left = isDark(r, c - 1);
      const right = isDark(r, c + 1);
      const R = ROUND_RADIUS;
      parts.push(roundedModule(x, y, !up && !left ? R : 0, !up && !right ? R : 0, !down && !right ? R : 0, !down && !left ? R : 0));
    }
  }
  return parts.join('');
}

/** Lays out a symbol with its quiet zone, the cleared logo square and the frame. */
export function composeArt(symbol: QrSymbol, o: ArtOptions): QrArt {
  const codeSide = symbol.size + 2 * o.quietZone;
  const border = o.frameText ? FRAME_BORDER : 0;
  const band = o.frameText ? Math.max(FRAME_BAND_MIN, codeSide * FRAME_BAND_SHARE) : 0;
  const width = codeSide + 2 * border;
  const height = codeSide + 2 * border + (band > 0 ? band - border : 0);
  const code: Box = { x: border, y: border, side: codeSide };
  const ox = code.x + o.quietZone;
  const oy = code.y + o.quietZone;

  let cleared: Box | null = null;
  let logo: Box | null = null;
  if (o.logo) {
    const side = logoSideModules(symbol.size);
    const start = (symbol.size - side) / 2;
    cleared = { x: start, y: start, side };
    // Half a module of background around the image, so its edge never merges with a module.
    logo = { x: ox + start + 0.5, y: oy + start + 0.5, side: side - 1 };
  }

  let frame: ArtFrame | null = null;
  if (o.frameText) {
    const bandTop = code.y + codeSide;
    const chars = Array.from(o.frameText).length;
    const room = width - 2 * border - 2;
    const fontSize = Math.min((band - border) * 0.6 / CAP_HEIGHT_EM, room / (chars * MONO_ADVANCE_EM));
    frame = {
      path: rect(0, 0, width, height) + rect(code.x, code.y, codeSide, codeSide, true),
      text: o.frameText,
      fontSize,
      centerX: width / 2,
      baseline: bandTop + (band - border) / 2 + (CAP_HEIGHT_EM * fontSize) / 2,
    };
  }
  return { symbol, width, height, code, modulesPath: modulesPath(symbol, o.moduleStyle, ox, oy, cleared), logo, frame };
}

export type ArtFit = { ok: true; art: QrArt; moduleMm: number } | { ok: false; neededMm: number; version: number | null };

/**
 * The styled counterpart of fitQr: the strongest error-correction level whose code, with its
 * quiet zone and frame, fits a `sideMm` square with modules of at least `minModuleMm`. With a
 * logo only level H is tried.
 */
export function fitArt(text: string, sideMm: number, minModuleMm: number, o: Omit<ArtOptions, 'quietZone'>): ArtFit {
  let fallback: { neededMm: number; version: number | null } = { neededMm: Infinity, version: null };
  for (const ec of o.logo ? LOGO_EC_LEVELS : EC_LEVELS) {
    let symbol: QrSymbol;
    try {
      symbol = qrSymbol(text, ec);
    } catch {
      continue; // more data than any QR version holds at this level
    }
    const art = composeArt(symbol, { ...o, quietZone: QUIET_ZONE_MODULES });
    const units = Math.max(art.width, art.height);
    const moduleMm = sideMm / units;
    if (moduleMm >= minModuleMm) return { ok: true, art, moduleMm };
    const neededMm = units * minModuleMm;
    if (neededMm < fallback.neededMm) fallback = { neededMm, version: symbol.version };
  }
  return { ok: false, ...fallback };
}
