import QRCode from 'qrcode';

/** Light modules required around the symbol by ISO/IEC 18004 (the "quiet zone"). */
export const QUIET_ZONE_MODULES = 4;

/**
 * Smallest printed module (one QR "pixel") we accept, in mm. Phone cameras at arm's length read
 * 0.5 mm modules reliably on matte labels; below that, focus and print gain start to fail.
 */
export const MIN_MODULE_MM = 0.5;

/**
 * Error-correction levels tried in order. Q (25% of the symbol can be lost) suits labels that
 * get scuffed in the field; M (15%) is the fallback that lets a longer URL fit a small label
 * with larger modules. L and H are not used: L is too fragile outdoors, and H makes the symbol
 * denser (smaller modules) for a gain only logos need.
 */
export const EC_LEVELS = ['Q', 'M'] as const;
/**
 * With a logo over the centre only H (30 % recoverable) is used: the logo already takes part of
 * that budget, and a label that cannot fit an H code is refused rather than printed fragile.
 */
export const LOGO_EC_LEVELS = ['H'] as const;
export type EcLevel = 'L' | 'M' | 'Q' | 'H';

export interface QrSymbol {
  text: string;
  version: number;
  ecLevel: EcLevel;
  /** Modules per side, without the quiet zone. */
  size: number;
  /** Row-major, 1 = dark. */
  dark: Uint8Array;
  /** Encoding modes of the data segments (e.g. ['Alphanumeric']). */
  modes: string[];
}

export function qrSymbol(text: string, ecLevel: EcLevel): QrSymbol {
  const qr = QRCode.create(text, { errorCorrectionLevel: ecLevel });
  const size = qr.modules.size;
  const dark = new Uint8Array(size * size);
  for (let r = 0; r < size; r++) for (let c = 0; c < size; c++) dark[r * size + c] = qr.modules.get(r, c) ? 1 : 0;
  const modes = qr.segments.map((s) => (s as unknown as { mode: { id: string } }).mode.id);
  return { text, version: qr.version, ecLevel, size, dark, modes };
}

/**
 * The text a label encodes: the scan URL with scheme, host, `/v/` and slug in upper case, so
 * the whole URL fits QR alphanumeric mode (0-9 A-Z space $ % * + - . / :), which takes 5.5 bits
 * per character instead of 8 and gives a smaller symbol with larger modules. The service
 * matches those parts case-insensitively (DESIGN §3 "Slugs"). A path inside the scan base (a
 * reverse-proxy prefix) is left as it is, since a proxy may treat it case-sensitively.
 */
export function printableUrl(url: string): string {
  const m = /^([a-z][a-z0-9+.-]*:\/\/[^/?#]*)(.*?)(\/v\/[^/?#]+)$/i.exec(url);
  if (!m) return url;
  return `${m[1]!.toUpperCase()}${m[2]!}${m[3]!.toUpperCase()}`;
}

/** Dark runs along each row, as [row, column, length]: one rectangle per run keeps the PDF small. */
export function darkRuns(symbol: QrSymbol): [number, number, number][] {
  const runs: [number, number, number][] = [];
  const { size, dark } = symbol;
  for (let r = 0; r < size; r++) {
    let c = 0;
    while (c < size) {
      if (dark[r * size + c]) {
        const start = c;
        while (c < size && dark[r * size + c]) c++;
        runs.push([r, start, c - start]);
      } else {
        c++;
      }
    }
  }
  return runs;
}

export interface QrFit {
  symbol: QrSymbol;
  /** Printed module size in mm. */
  moduleMm: number;
}

export type FitResult = { ok: true; fit: QrFit } | { ok: false; neededMm: number; version: number | null };

/**
 * Picks the strongest error-correction level whose symbol, quiet zone included, fits a square
 * of `sideMm` with modules of at least `minModuleMm`. The symbol fills the square.
 */
export function fitQr(text: string, sideMm: number, minModuleMm = MIN_MODULE_MM): FitResult {
  let fallback: { neededMm: number; version: number | null } = { neededMm: Infinity, version: null };
  for (const ec of EC_LEVELS) {
    let symbol: QrSymbol;
    try {
      symbol = qrSymbol(text, ec);
    } catch {
      continue; // more data than any QR version holds at this level
    }
    const total = symbol.size + 2 * QUIET_ZONE_MODULES;
    const moduleMm = sideMm / total;
    if (moduleMm >= minModuleMm) return { ok: true, fit: { symbol, moduleMm } };
    const neededMm = total * minModuleMm;
    if (neededMm < fallback.neededMm) fallback = { neededMm, version: symbol.version };
  }
  return { ok: false, ...fallback };
}
