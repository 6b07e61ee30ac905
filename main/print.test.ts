import { describe, expect, it } from 'vitest';
import { MAX_PRINT_BYTES, checkPrintRequest, safePdfName } from './print.ts';

const pdf = new TextEncoder().encode('%PDF-1.7\n…');

describe('desktop printing checks', () => {
  it('accepts a PDF and keeps a plain filename', () => {
    expect(checkPrintRequest(pdf, 'CAFE-avery-l7160.pdf')).toEqual({ ok: true, bytes: pdf, filename: 'CAFE-avery-l7160.pdf' });
  });

  it('refuses anything that is not a PDF byte array, or too large', () => {
    expect(checkPrintRequest('%PDF-1.7', 'x.pdf')).toEqual({ ok: false, reason: 'not a byte array' });
    expect(checkPrintRequest(new TextEncoder().encode('<html>'), 'x.pdf')).toEqual({ ok: false, reason: 'not a PDF' });
    const huge = new Uint8Array(MAX_PRINT_BYTES + 1);
    huge.set(pdf);
    expect(checkPrintRequest(huge, 'x.pdf')).toEqual({ ok: false, reason: 'PDF too large' });
  });

  it('reduces names to a safe basename with a .pdf extension', () => {
    expect(safePdfName('../../etc/passwd')).toBe('passwd.pdf');
    expect(safePdfName('C:\\Users\\x\\labels.PDF')).toBe('labels.pdf');
    expect(safePdfName('..hidden')).toBe('hidden.pdf');
    expect(safePdfName('a\u0000b\nc.pdf')).toBe('a_b_c.pdf');
    expect(safePdfName(undefined)).toBe('waymark-labels.pdf');
    expect(safePdfName('')).toBe('waymark-labels.pdf');
  });
});
