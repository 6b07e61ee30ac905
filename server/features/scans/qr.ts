/**
 * QR codes with the `qrcode` package: synchronous inline SVG for scan pages (the API's styled
 * SVG/PNG files are the printing feature's QrStyleService). Pure apart from the library.
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

/**
 * The scan URL as printed: scheme, host, `/V/` and slug in upper case, so the whole string is in
 * the QR alphanumeric set (0-9 A-Z space $ % * + - . / :) and encodes in the smaller mode.
 * The scan path is matched case-insensitively, so the upper-case URL resolves the same node.
 */
export function printedScanUrl(scanBase: string, slug: string): string {
  return `${scanBase.replace(/\/+$/, '')}/v/${slug}`.toUpperCase();
}
