import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** What a sealed value starts with; a stored value without it is one written in clear before sealing existed. */
const PREFIX = 'enc1:';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** A sealed value whose key or associated data does not match: the key in the secret store is not the one it was sealed with. */
export class SecretUnreadableError extends Error {}

/**
 * Seals secrets kept in database columns (webhook signing secrets): AES-256-GCM under a
 * data-encryption key that lives in the secret store, never in the database, with a random nonce
 * per value and the row's id as associated data (a sealed value copied onto another row does not
 * open). The key is asked for at first use, so an instance that never seals anything creates none.
 */
export class SecretCipher {
  private readonly keyOf: () => Buffer;
  private key: Buffer | undefined;

  constructor(key: () => Buffer) {
    this.keyOf = key;
  }

  static isSealed(stored: string): boolean {
    return stored.startsWith(PREFIX);
  }

  seal(value: string, id: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.dataKey(), nonce).setAAD(Buffer.from(id, 'utf8'));
    const body = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
    return PREFIX + Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64url');
  }

  /** The clear value; one stored before sealing existed (no prefix) is returned as it is. */
  open(stored: string, id: string): string {
    if (!SecretCipher.isSealed(stored)) return stored;
    const bytes = Buffer.from(stored.slice(PREFIX.length), 'base64url');
    if (bytes.length < NONCE_BYTES + TAG_BYTES) throw new SecretUnreadableError(`sealed secret of ${id} is truncated`);
    const decipher = createDecipheriv('aes-256-gcm', this.dataKey(), bytes.subarray(0, NONCE_BYTES))
      .setAAD(Buffer.from(id, 'utf8'))
      .setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(bytes.subarray(NONCE_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretUnreadableError(`the secret of ${id} does not open with this instance's data key (was the secret store replaced? docs/security.md)`);
    }
  }

  private dataKey(): Buffer {
    this.key ??= this.keyOf();
    if (this.key.length !== 32) throw new Error('the data-encryption key must be 32 bytes');
    return this.key;
  }
}
