/** Crockford base32 for 40-bit slugs: 8 characters, no I L O U. */
export const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
export const SLUG_LENGTH = 8;

export function encode40(value: number): string {
  let out = '';
  let v = value;
  for (let i = 0; i < SLUG_LENGTH; i++) {
    out = ALPHABET[v % 32] + out;
    v = Math.floor(v / 32);
  }
  return out;
}

export function decode40(slug: string): number {
  let v = 0;
  for (const ch of slug) v = v * 32 + ALPHABET.indexOf(ch);
  return v;
}

/**
 * Canonical form of a slug typed or scanned by a person: upper case, with the usual Crockford
 * aliases (O→0, I/L→1). Returns null when it cannot be a slug.
 */
export function normalizeSlug(input: string): string | null {
  if (input.length !== SLUG_LENGTH) return null;
  const s = input.toUpperCase().replace(/O/g, '0').replace(/[IL]/g, '1');
  for (const ch of s) if (!ALPHABET.includes(ch)) return null;
  return s;
}
