/**
 * Per-tag NTAG21x passwords, diversified from an organization's tag master key: PWD and PACK are
 * the first 6 bytes of HMAC-SHA256(master key, label ‖ UID). Nothing per tag is stored: the
 * password of any tag is computed again from its UID when it is rewritten. The master key lives
 * in the secret store (never in the database, an API response or a log), created at first use.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { SecretStore } from '../../platform/secrets.ts';

/** Secret store entry of an organization's NTAG21x master key (32 random bytes, hex). */
export function masterKeySecretName(orgId: string): string {
  return `nfc.ntag21x_master_key.${orgId}`;
}

const LABEL = 'waymark ntag21x pwd v1';

export interface DerivedPassword {
  /** 4 bytes, hex. */
  pwd: string;
  /** 2 bytes, hex: what the tag answers to a correct PWD_AUTH. */
  pack: string;
}

export function derivePassword(masterKey: Buffer, uid: string): DerivedPassword {
  const uidBytes = Buffer.from(uid.replaceAll(':', ''), 'hex');
  const mac = createHmac('sha256', masterKey).update(LABEL).update(uidBytes).digest();
  return { pwd: mac.subarray(0, 4).toString('hex'), pack: mac.subarray(4, 6).toString('hex') };
}

export class TagPasswords {
  private readonly secrets: SecretStore;

  constructor(secrets: SecretStore) {
    this.secrets = secrets;
  }

  /** The tag's password; the master key is created when `create` and none exists yet. */
  passwordFor(orgId: string, uid: string, create: boolean): DerivedPassword | null {
    const name = masterKeySecretName(orgId);
    let key = this.secrets.get(name);
    if (key === null) {
      if (!create) return null;
      key = randomBytes(32).toString('hex');
      this.secrets.set(name, key);
    }
    return derivePassword(Buffer.from(key, 'hex'), uid);
  }
}
