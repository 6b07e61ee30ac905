import { expect } from 'vitest';

/** A small vCard 3.0 reader: unfold, split name/params/value, unescape TEXT. */
export function parseVcard(text: string): Array<{ name: string; params: string[]; value: string }> {
  expect(text.endsWith('\r\n')).toBe(true);
  for (const line of text.split('\r\n')) expect(Buffer.byteLength(line, 'utf8')).toBeLessThanOrEqual(75);
  const unfolded = text.replace(/\r\n[ \t]/g, '');
  return unfolded
    .split('\r\n')
    .filter(Boolean)
    .map((line) => {
      const colon = line.indexOf(':');
      const [name, ...params] = line.slice(0, colon).split(';');
      const raw = line.slice(colon + 1);
      const value = raw.replace(/\\([\\,;nN])/g, (_, c: string) => (c === 'n' || c === 'N' ? '\n' : c));
      return { name: name as string, params, value };
    });
}

