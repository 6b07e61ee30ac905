/**
 * Passwords people choose (a node's password gate): stored only as a scrypt hash with a random
 * salt of its own. API keys are hashed with plain SHA-256 (features/keys/apiKey.ts) because they
 * are 190 random bits; a chosen password is not, so it needs a slow, salted hash.
 * Format: `scrypt$<N>$<r>$<p>$<salt base64url>$<hash base64url>` (parameters stored, so they may
 * change later without breaking stored hashes). scrypt runs on libuv's thread pool.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const N = 16384;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, { N, r: R, p: P });
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** False for a wrong password and for a hash this code cannot read (never throws on bad input). */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [n, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  if (![n, r, p].every((v) => Number.isSafeInteger(v) && v > 0) || n > 1 << 20 || r > 32 || p > 16) return false;
  const salt = Buffer.from(parts[4] as string, 'base64url');
  const expected = Buffer.from(parts[5] as string, 'base64url');
  if (expected.length !== KEY_LENGTH) return false;
  const key = await derive(password, salt, { N: n, r, p, maxmem: 256 * n * r + 1024 * 1024 });
  return timingSafeEqual(key, expected);
}
