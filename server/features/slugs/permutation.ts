/**
 * A keyed permutation of the 40-bit slug space (a balanced Feistel network on two 20-bit
 * halves). Minted values are sequential (block, offset); passing them through this makes slugs
 * look random and hide creation order. The key is a constant of the product, identical in every
 * instance, so unique inputs stay unique across sites: obfuscation, not secrecy.
 */
const HALF = 2 ** 20;
const MASK = HALF - 1;
const ROUND_KEYS = [0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

function round(x: number, key: number): number {
  let h = (x ^ key) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  h ^= h >>> 16;
  return h & MASK;
}

export const SPACE = 2 ** 40;

export function permute(value: number): number {
  let left = Math.floor(value / HALF);
  let right = value % HALF;
  for (const key of ROUND_KEYS) [left, right] = [right, left ^ round(right, key)];
  return left * HALF + right;
}

export function unpermute(value: number): number {
  let left = Math.floor(value / HALF);
  let right = value % HALF;
  for (let i = ROUND_KEYS.length - 1; i >= 0; i--) [left, right] = [right ^ round(left, ROUND_KEYS[i]!), left];
  return left * HALF + right;
}
