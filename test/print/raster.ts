import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { needs } from '../support/system.ts';

/**
 * Test helpers around poppler-utils (pdftoppm: PDF → greyscale PGM pages) and zbar-tools
 * (zbarimg: QR decoding). PGM is parsed here by hand, so no image library is needed.
 */

/** A one-line reason to skip (under CI: a failure), or null when pdftoppm and zbarimg are installed. */
export function missingTools(): string | null {
  return needs.poppler() ?? needs.zbar();
}

export interface Gray {
  width: number;
  height: number;
  /** One byte per pixel, 0 = black. */
  data: Uint8Array;
}

export function parsePgm(buf: Buffer): Gray {
  // P5 <ws> width <ws> height <ws> maxval <single ws> raster; '#' comments in the header.
  const tokens: string[] = [];
  let i = 0;
  while (tokens.length < 4) {
    while (/\s/.test(String.fromCharCode(buf[i]!))) i++;
    if (buf[i] === 0x23) {
      while (buf[i] !== 0x0a) i++;
      continue;
    }
    let t = '';
    while (!/\s/.test(String.fromCharCode(buf[i]!))) t += String.fromCharCode(buf[i++]!);
    tokens.push(t);
  }
  i++; // the single whitespace after maxval
  if (tokens[0] !== 'P5' || tokens[3] !== '255') throw new Error(`not an 8-bit binary PGM: ${tokens.join(' ')}`);
  const width = Number(tokens[1]);
  const height = Number(tokens[2]);
  return { width, height, data: new Uint8Array(buf.buffer, buf.byteOffset + i, width * height) };
}

export function toPgm(img: Gray): Buffer {
  return Buffer.concat([Buffer.from(`P5\n${img.width} ${img.height}\n255\n`), Buffer.from(img.data)]);
}

/** Renders every page of `pdf` at `dpi` (greyscale, anti-aliased as a printer driver would). */
export function renderPdf(pdf: Buffer, dpi: number): Gray[] {
  const dir = mkdtempSync(join(tmpdir(), 'waymark-render-'));
  try {
    writeFileSync(join(dir, 'in.pdf'), pdf);
    const r = spawnSync('pdftoppm', ['-r', String(dpi), '-gray', join(dir, 'in.pdf'), join(dir, 'page')], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`pdftoppm failed: ${r.stderr}`);
    const pages = readdirSync(dir)
      .filter((f) => f.startsWith('page') && f.endsWith('.pgm'))
      .sort((a, b) => Number(/(\d+)\.pgm$/.exec(a)![1]) - Number(/(\d+)\.pgm$/.exec(b)![1]));
    return pages.map((f) => parsePgm(readFileSync(join(dir, f))));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface PxRect {
  x0: number;
  y0: number;
  x1: number; // exclusive
  y1: number; // exclusive
}

/** A rectangle in mm → pixels at `dpi`, clipped to the image. */
export function mmToPx(rect: { x: number; y: number; width: number; height: number }, dpi: number, img: Gray): PxRect {
  const k = dpi / 25.4;
  return {
    x0: Math.max(0, Math.round(rect.x * k)),
    y0: Math.max(0, Math.round(rect.y * k)),
    x1: Math.min(img.width, Math.round((rect.x + rect.width) * k)),
    y1: Math.min(img.height, Math.round((rect.y + rect.height) * k)),
  };
}

export function crop(img: Gray, r: PxRect): Gray {
  const width = r.x1 - r.x0;
  const height = r.y1 - r.y0;
  const data = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) data.set(img.data.subarray((r.y0 + y) * img.width + r.x0, (r.y0 + y) * img.width + r.x1), y * width);
  return { width, height, data };
}

export const DARK = 128;

/** Bounding box of the dark pixels inside `r` (null when there are none). */
export function darkBox(img: Gray, r: PxRect = { x0: 0, y0: 0, x1: img.width, y1: img.height }): PxRect | null {
  let box: PxRect | null = null;
  for (let y = r.y0; y < r.y1; y++) {
    const row = y * img.width;
    for (let x = r.x0; x < r.x1; x++) {
      if (img.data[row + x]! < DARK) {
        if (!box) box = { x0: x, y0: y, x1: x + 1, y1: y + 1 };
        else {
          if (x < box.x0) box.x0 = x;
          if (x >= box.x1) box.x1 = x + 1;
          if (y < box.y0) box.y0 = y;
          if (y >= box.y1) box.y1 = y + 1;
        }
      }
    }
  }
  return box;
}

/** Dark pixels of the image that fall outside every one of `rects`. */
export function darkOutside(img: Gray, rects: PxRect[]): number {
  let count = 0;
  for (let y = 0; y < img.height; y++) {
    const row = y * img.width;
    for (let x = 0; x < img.width; x++) {
      if (img.data[row + x]! < DARK && !rects.some((r) => x >= r.x0 && x < r.x1 && y >= r.y0 && y < r.y1)) count++;
    }
  }
  return count;
}

/**
 * Decodes each image with zbarimg (QR only; one process for the lot) and returns, per image,
 * the texts found in it.
 */
export function decodeAll(images: Gray[]): string[][] {
  if (images.length === 0) return [];
  const dir = mkdtempSync(join(tmpdir(), 'waymark-zbar-'));
  try {
    const files = images.map((img, i) => {
      const f = join(dir, `c${String(i).padStart(5, '0')}.pgm`);
      writeFileSync(f, toPgm(img));
      return f;
    });
    const r = spawnSync('zbarimg', ['--xml', '-q', '-Sdisable', '-Sqrcode.enable', ...files], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    if (r.error) throw r.error;
    const found = new Map<string, string[]>();
    for (const m of r.stdout.matchAll(/<source href='([^']*)'>([\s\S]*?)<\/source>/g)) {
      const texts = [...m[2]!.matchAll(/<data><!\[CDATA\[([\s\S]*?)\]\]><\/data>/g)].map((d) => d[1]!);
      found.set(m[1]!, texts);
    }
    return files.map((f) => found.get(f) ?? []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A minimal PNG reader for screenshots (8-bit greyscale, RGB or RGBA, not interlaced): inflates
 * the IDAT stream, undoes the row filters and returns a greyscale image.
 */
export function parsePng(buf: Buffer): Gray {
  if (buf.readUInt32BE(0) !== 0x89504e47) throw new Error('not a PNG');
  let pos = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  while (pos < buf.length) {
    const len = buf.readUInt32BE(pos);
    const type = buf.toString('latin1', pos + 4, pos + 8);
    const data = buf.subarray(pos + 8, pos + 8 + len);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      const depth = data[8];
      const colour = data[9];
      const interlace = data[12];
      channels = ({ 0: 1, 2: 3, 6: 4 } as Record<number, number>)[colour!] ?? 0;
      if (depth !== 8 || !channels || interlace !== 0) throw new Error(`unsupported PNG (depth ${depth}, colour ${colour}, interlace ${interlace})`);
    } else if (type === 'IDAT') {
      idat.push(data);
    } else if (type === 'IEND') {
      break;
    }
    pos += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const prev = new Uint8Array(stride);
  const cur = new Uint8Array(stride);
  const out = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const row = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? cur[i - channels]! : 0;
      const b = prev[i]!;
      const c = i >= channels ? prev[i - channels]! : 0;
      let v = row[i]!;
      if (filter === 1) v += a;
      else if (filter === 2) v += b;
      else if (filter === 3) v += (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - b);
        const pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      cur[i] = v & 0xff;
    }
    for (let x = 0; x < width; x++) {
      const o = x * channels;
      out[y * width + x] = channels === 1 ? cur[o]! : Math.round(0.299 * cur[o]! + 0.587 * cur[o + 1]! + 0.114 * cur[o + 2]!);
    }
    prev.set(cur);
  }
  return { width, height, data: out };
}
