import { Resvg } from '@resvg/resvg-js';
import { CAPTION_FONT_FAMILY } from './captionFont.ts';

/**
 * Rasterises a code's SVG (artSvg) with resvg, the same renderer that reads SVG logos, so the PNG
 * and SVG forms of a code are one drawing. Only the shipped caption font is loaded: the frame's
 * text looks the same on every machine, and no system font lookup runs per request.
 */
export function svgToPng(svg: string, widthPx: number, fontFile: string): Buffer {
  const resvg = new Resvg(svg, {
    fitTo: { mode: 'width', value: widthPx },
    font: { loadSystemFonts: false, fontFiles: [fontFile], defaultFontFamily: CAPTION_FONT_FAMILY },
    shapeRendering: 2,
    logLevel: 'off',
  });
  return resvg.render().asPng();
}
