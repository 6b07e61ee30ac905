import { describe, expect, it } from 'vitest';
import { filenameFrom } from './filename.ts';

describe('filenameFrom', () => {
  it('reads the quoted filename', () => {
    expect(filenameFrom('inline; filename="CAFE-labels-avery-l7160.pdf"', 'x.pdf')).toBe('CAFE-labels-avery-l7160.pdf');
  });
  it('prefers filename* and decodes it', () => {
    expect(filenameFrom(`attachment; filename="a.pdf"; filename*=UTF-8''caf%C3%A9.pdf`, 'x.pdf')).toBe('café.pdf');
  });
  it('falls back without a header or name, and never returns a path', () => {
    expect(filenameFrom(null, 'x.pdf')).toBe('x.pdf');
    expect(filenameFrom('inline', 'x.pdf')).toBe('x.pdf');
    expect(filenameFrom('attachment; filename="../../etc/evil.pdf"', 'x.pdf')).toBe('evil.pdf');
  });
});
