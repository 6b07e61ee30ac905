import type { QrStyleT } from '../../schemas/qrStyle.ts';
import { CAPTION_FONT_FAMILY } from './captionFont.ts';
import type { QrArt } from './qrArt.ts';

export function escapeXml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const n = (v: number) => String(Math.round(v * 1000) / 1000);

/**
 * The shapes of a styled code as SVG elements, in module units. The logo goes in as the PNG we
 * re-encoded at upload (a data: URI): no uploaded markup ever reaches an SVG.
 */
export function artElements(art: QrArt, style: Pick<QrStyleT, 'fg' | 'bg'>, logoPng: Buffer | null, onWhitePaper = false): string {
  const out: string[] = [];
  // On a label, white paper is the background already (the PDF draws none either).
  if (!(onWhitePaper && style.bg === '#FFFFFF')) out.push(`<rect x="${n(art.code.x)}" y="${n(art.code.y)}" width="${n(art.code.side)}" height="${n(art.code.side)}" fill="${style.bg}"/>`);
  if (art.frame) {
    const f = art.frame;
    out.push(`<path fill="${style.fg}" d="${f.path}"/>`);
    out.push(
      `<text x="${n(f.centerX)}" y="${n(f.baseline)}" font-family="'${CAPTION_FONT_FAMILY}', monospace" font-size="${n(f.fontSize)}" text-anchor="middle" fill="${style.bg}">${escapeXml(f.text)}</text>`,
    );
  }
  out.push(`<path fill="${style.fg}" d="${art.modulesPath}"/>`);
  if (art.logo && logoPng) {
    const l = art.logo;
    out.push(`<image x="${n(l.x)}" y="${n(l.y)}" width="${n(l.side)}" height="${n(l.side)}" preserveAspectRatio="xMidYMid meet" href="data:image/png;base64,${logoPng.toString('base64')}"/>`);
  }
  return out.join('');
}

/** A standalone SVG of the code, `widthPx` wide. */
export function artSvg(art: QrArt, style: Pick<QrStyleT, 'fg' | 'bg'>, logoPng: Buffer | null, widthPx: number): string {
  const heightPx = Math.round((widthPx * art.height) / art.width);
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${widthPx}" height="${heightPx}" viewBox="0 0 ${n(art.width)} ${n(art.height)}">` +
    artElements(art, style, logoPng) +
    '</svg>\n'
  );
}
