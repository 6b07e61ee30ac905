/**
 * Compressed scan pages. A page is rendered once per content and cached with its node (resolver.ts
 * contentResponse; status pages once per kind), so its gzip and brotli bytes are computed on the
 * first request that accepts them and kept beside it: the hot path only picks an encoding.
 */
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { Rendered } from './pages.ts';

export type Encoding = 'br' | 'gzip';

/** Bodies smaller than this go as they are (a vCard file, a few hundred bytes). */
const MIN_SIZE = 1024;

/**
 * The encoding to send for an Accept-Encoding header: br, else gzip, unless refused with q=0;
 * null for none. `*` stands for both.
 */
export function pickEncoding(header: string | undefined): Encoding | null {
  if (!header) return null;
  let br: number | null = null;
  let gzip: number | null = null;
  let any: number | null = null;
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';');
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    const weight = Number.isFinite(q) ? q : 0;
    if (name === 'br') br = weight;
    else if (name === 'gzip' || name === 'x-gzip') gzip = weight;
    else if (name === '*') any = weight;
  }
  if ((br ?? any ?? 0) > 0) return 'br';
  if ((gzip ?? any ?? 0) > 0) return 'gzip';
  return null;
}

interface EncodedCache {
  raw?: Buffer;
  br?: Buffer;
  gzip?: Buffer;
}

const cache = new WeakMap<Rendered, EncodedCache>();

/** The body to send and its encoding (null: as is), computed once per page and encoding. */
export function encodedBody(page: Rendered, accept: string | undefined): { body: Buffer; encoding: Encoding | null } {
  let c = cache.get(page);
  if (!c) {
    c = {};
    cache.set(page, c);
  }
  const raw = (c.raw ??= Buffer.from(page.body, 'utf8'));
  const encoding = raw.length >= MIN_SIZE ? pickEncoding(accept) : null;
  if (encoding === 'br') {
    // Quality 5: within a few per cent of the best size for a page this small, at a fraction of the time.
    c.br ??= brotliCompressSync(raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: raw.length } });
    return { body: c.br, encoding };
  }
  if (encoding === 'gzip') {
    c.gzip ??= gzipSync(raw, { level: 6 });
    return { body: c.gzip, encoding };
  }
  return { body: raw, encoding: null };
}
