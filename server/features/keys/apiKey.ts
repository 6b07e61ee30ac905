import { createHash, randomInt } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `wmk_` + 32 random base62 characters (~190 bits). */
export function generateApiKey(): string {
  let body = '';
  for (let i = 0; i < 32; i++) body += BASE62[randomInt(62)];
  return `wmk_${body}`;
}

/** Keys are stored only as this hash (high-entropy secrets need no slow KDF). */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function keyPrefix(key: string): string {
  return key.slice(0, 8);
}
