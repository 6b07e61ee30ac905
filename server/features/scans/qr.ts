/**
 * QR codes with the `qrcode` package: synchronous inline SVG for scan pages, and SVG/PNG files
 * for the API. Pure apart from the library.
 */
import { createRequire } from 'node:module';
import QRCode from 'qrcode';

export type Ecc = 'L' | 'M' | 'Q' | 'H';

interface SvgTagRenderer {
  render(qr: QRCode.QRCode, options: { margin: number; width?: number; color?: { dark: string; light: string } }): string;
}

const require = createRequire(import.meta.url);
const svgTag = require('qrcode/lib/renderer/svg-tag.js') as SvgTagRenderer;

/** An inline SVG (no style attributes, so it passes a strict CSP) of `text`. */
export function qrSvgSync(text: string, options: { ecc?: Ecc; margin?: number; title?: string } = {}): string {
  const qr = QRCode.create(text, { errorCorrectionLevel: options.ecc ?? 'M' });
  const svg = svgTag.render(qr, { margin: options.margin ?? 2, color: { dark: '#000000ff', light: '#ffffffff' } });
  const label = options.title ? ` role="img" aria-label="${options.title.replace(/[<>&"]/g, '')}"` : ' aria-hidden="true"';
  return svg.trim().replace('<svg ', `<svg${label} `);
}

export interface QrFileOptions {
  format: 'svg' | 'png';
  size: number;
  ecc: Ecc;
  margin: number;
}

/** The scan URL as a QR code file. */
export async function qrFile(text: string, o: QrFileOptions): Promise<{ contentType: string; body: Buffer }> {
  const common = { errorCorrectionLevel: o.ecc, margin: o.margin, width: o.size } as const;
  if (o.format === 'svg') {
    const svg = await QRCode.toString(text, { ...common, type: 'svg' });
    return { contentType: 'image/svg+xml', body: Buffer.from(svg, 'utf8') };
  }
  const png = await QRCode.toBuffer(text, { ...common, type: 'png' });
  return { contentType: 'image/png', body: png };
}

/**
 * The scan URL as printed: scheme, host, `/V/` and slug in upper case, so the whole string is in
 * the QR alphanumeric set (0-9 A-Z space $ % * + - . / :) and encodes in the smaller mode.
 * The scan path is matched case-insensitively, so the upper-case URL resolves the same node.
 */
export function printedScanUrl(scanBase: string, slug: string): string {
  return `${scanBase.replace(/\/+$/, '')}/v/${slug}`.toUpperCase();
}
