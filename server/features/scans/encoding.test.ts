import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { encodedBody, pickEncoding } from './encoding.ts';
import { renderStatus } from './pages.ts';

describe('pickEncoding', () => {
  it('prefers brotli, then gzip, honouring q=0 and *', () => {
    expect(pickEncoding(undefined)).toBeNull();
    expect(pickEncoding('gzip, deflate, br, zstd')).toBe('br');
    expect(pickEncoding('gzip, deflate')).toBe('gzip');
    expect(pickEncoding('br;q=0, gzip;q=0.5')).toBe('gzip');
    expect(pickEncoding('identity')).toBeNull();
    expect(pickEncoding('*')).toBe('br');
    expect(pickEncoding('*;q=0, gzip')).toBe('gzip');
    expect(pickEncoding('GZIP')).toBe('gzip');
  });
});

describe('encodedBody', () => {
  it('compresses a page once per encoding and the bytes decode to the page', () => {
    const page = renderStatus('unknown');
    const br = encodedBody(page, 'br');
    expect(br.encoding).toBe('br');
    expect(brotliDecompressSync(br.body).toString('utf8')).toBe(page.body);
    expect(br.body.length).toBeLessThan(Buffer.byteLength(page.body) / 2);
    expect(encodedBody(page, 'gzip, br').body).toBe(br.body); // the same cached bytes
    const gz = encodedBody(page, 'gzip');
    expect(gunzipSync(gz.body).toString('utf8')).toBe(page.body);
    expect(encodedBody(page, undefined)).toMatchObject({ encoding: null });
  });

  it('leaves small bodies alone', () => {
    expect(encodedBody({ status: 200, headers: {}, body: 'BEGIN:VCARD\r\nEND:VCARD\r\n' }, 'gzip, br').encoding).toBeNull();
  });
});
