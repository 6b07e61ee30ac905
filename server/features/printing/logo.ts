import { Resvg } from '@resvg/resvg-js';
import { PNG } from 'pngjs';
import { ValidationError } from '../../platform/errors.ts';
import { MAX_LOGO_BYTES } from '../../schemas/qrStyle.ts';

/** A logo is drawn at most a few centimetres wide: more pixels only cost memory and PDF size. */
export const MAX_LOGO_PIXELS = 2048;
const MIN_LOGO_PIXELS = 16;
/** An SVG logo is rasterised to this many pixels along its longer side. */
export const SVG_LOGO_RASTER_PX = 512;

export interface NormalisedLogo {
  png: Buffer;
  width: number;
  height: number;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const refuse = (message: string) => new ValidationError({ data_base64: message });

/**
 * A PNG upload, decoded and encoded again: only the pixels survive (no text chunks, colour
 * profiles or trailing bytes), so what we later embed is an image we wrote. The size in the
 * header is checked before decoding, so a small file cannot claim a huge canvas.
 */
function normalisePng(bytes: Buffer): NormalisedLogo {
  if (bytes.length < 33 || !bytes.subarray(0, 8).equals(PNG_SIGNATURE) || bytes.toString('latin1', 12, 16) !== 'IHDR') {
    throw refuse('is not a PNG file');
  }
  const width = bytes.readUInt32BE(16);
  const height = bytes.readUInt32BE(20);
  if (width > MAX_LOGO_PIXELS || height > MAX_LOGO_PIXELS) throw refuse(`is ${width} × ${height} pixels; a logo may be at most ${MAX_LOGO_PIXELS} × ${MAX_LOGO_PIXELS}`);
  if (width < MIN_LOGO_PIXELS || height < MIN_LOGO_PIXELS) throw refuse(`is ${width} × ${height} pixels; a logo must be at least ${MIN_LOGO_PIXELS} × ${MIN_LOGO_PIXELS}`);
  let decoded: PNG;
  try {
    decoded = PNG.sync.read(bytes);
  } catch (err) {
    throw refuse(`is not a readable PNG file (${(err as Error).message})`);
  }
  const out = new PNG({ width: decoded.width, height: decoded.height });
  decoded.data.copy(out.data);
  return { png: PNG.sync.write(out), width: decoded.width, height: decoded.height };
}

/**
 * What an SVG logo may not contain. It is rasterised (the markup is never embedded anywhere),
 * but the renderer would still fetch what it references: files on this machine, other images,
 * entities. A logo is shapes and text; anything that points elsewhere is refused.
 */
const SVG_REFUSED: [RegExp, string][] = [
  [/<!DOCTYPE|<!ENTITY/i, 'must not declare a DOCTYPE or entities'],
  [/<script\b/i, 'must not contain scripts'],
  [/<foreignObject\b/i, 'must not contain foreignObject'],
  [/<image\b/i, 'must not embed other images (upload a PNG instead)'],
  [/\bhref\s*=\s*["'](?!#)/i, 'must not link outside the file (only #fragment references)'],
  [/url\(\s*["']?(?!#)/i, 'must not reference anything outside the file in url(…)'],
  [/@import/i, 'must not import style sheets'],
];

/** An SVG upload, checked and rasterised to a PNG: no uploaded markup is kept. */
function rasteriseSvg(bytes: Buffer): NormalisedLogo {
  const text = bytes.toString('utf8');
  if (!/<svg[\s>]/i.test(text)) throw refuse('is not an SVG file (no <svg> element)');
  for (const [pattern, message] of SVG_REFUSED) if (pattern.test(text)) throw refuse(message);
  let resvg: Resvg;
  try {
    resvg = new Resvg(text, { font: { loadSystemFonts: false }, logLevel: 'off' });
  } catch (err) {
    throw refuse(`is not a readable SVG file (${(err as Error).message})`);
  }
  const longer = Math.max(resvg.width, resvg.height);
  if (!(longer > 0)) throw refuse('has no size (width, height or viewBox)');
  const zoomed = new Resvg(text, { font: { loadSystemFonts: false }, logLevel: 'off', fitTo: { mode: 'zoom', value: SVG_LOGO_RASTER_PX / longer } });
  const image = zoomed.render();
  if (image.width < MIN_LOGO_PIXELS || image.height < MIN_LOGO_PIXELS) throw refuse(`is too narrow: ${image.width} × ${image.height} pixels once rasterised`);
  return { png: image.asPng(), width: image.width, height: image.height };
}

/**
 * Largest logo as kept (the re-encoded PNG, which can outgrow a well-compressed upload): the logo
 * travels to every site in one sync change, whose fields are at most 1,000,000 characters
 * (schemas/sync.ts), and 512 KiB is 699,052 in base64.
 */
export const MAX_STORED_LOGO_BYTES = 512 * 1024;

/** Checks and converts an uploaded logo (422 naming what is wrong). */
export function normaliseLogo(contentType: 'image/png' | 'image/svg+xml', base64: string): NormalisedLogo {
  const bytes = Buffer.from(base64, 'base64');
  if (bytes.length === 0) throw refuse('is empty');
  if (bytes.length > MAX_LOGO_BYTES) throw refuse(`is ${bytes.length} bytes; a logo may be at most ${MAX_LOGO_BYTES / 1024} KiB`);
  const logo = contentType === 'image/png' ? normalisePng(bytes) : rasteriseSvg(bytes);
  if (logo.png.length > MAX_STORED_LOGO_BYTES) {
    throw refuse(`is ${logo.png.length} bytes once re-encoded as a plain PNG; at most ${MAX_STORED_LOGO_BYTES / 1024} KiB: use fewer pixels or fewer colours`);
  }
  return logo;
}
