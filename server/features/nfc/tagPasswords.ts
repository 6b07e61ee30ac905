/**
 * Per-tag NTAG21x passwords, diversified from a version of the organization's NTAG21x master key:
 * PWD and PACK are the first 6 bytes of HMAC-SHA256(master key, label ‖ UID). Nothing per tag is
 * stored but the version (the write log): the password of any tag is computed again from its UID
 * when it is rewritten. The keys live in the secret store (never in the database, an API response
 * or a log), the first one created at first use; `waymark tap-keys rotate --kind ntag21x` adds a
 * version and makes it current (new protections use it; a rewrite of an older tag authenticates
 * with its version and moves it to the current one). Where processes share a PostgreSQL database,
 * version 1 is derived from the operator's root key when none is stored (InstanceKeys), so every
 * process writes a tag with the same password without writing a key.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { InstanceKeys } from '../../platform/instanceKeys.ts';

/**
 * Secret store entry of an organization's NTAG21x master keys: `{"current": 2, "keys": {"1":
 * "<64 hex>", "2": …}}`. A plain hex value (written before versions existed) is version 1.
 */
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

export interface VersionedPassword extends DerivedPassword {
  /** The master key version it is derived from. */
  version: number;
}

export function derivePassword(masterKey: Buffer, uid: string): DerivedPassword {
  const uidBytes = Buffer.from(uid.replaceAll(':', ''), 'hex');
  const mac = createHmac('sha256', masterKey).update(LABEL).update(uidBytes).digest();
  return { pwd: mac.subarray(0, 4).toString('hex'), pack: mac.subarray(4, 6).toString('hex') };
}

interface StoredKeys {
  current: number;
  keys: Record<string, string>;
}

export class TagPasswords {
  private readonly keys: InstanceKeys;

  constructor(keys: InstanceKeys) {
    this.keys = keys;
  }

  /**
   * The tag's password at `version` (default: the current one). With `create`, the first master
   * key is created when the organization has none. Null when that version is not stored.
   */
  passwordFor(orgId: string, uid: string, options: { version?: number | undefined; create?: boolean } = {}): VersionedPassword | null {
    let stored = this.read(orgId);
    if (!stored) {
      if (!options.create) return null;
      this.rotate(orgId);
      stored = this.read(orgId)!;
    }
    const version = options.version ?? stored.current;
    const key = stored.keys[String(version)];
    return key ? { ...derivePassword(Buffer.from(key, 'hex'), uid), version } : null;
  }

  /** The current version, null when the organization has no key yet. */
  currentVersion(orgId: string): number | null {
    return this.read(orgId)?.current ?? null;
  }

  /** A new random version (32 bytes) becomes current; older ones stay for the tags protected with them. */
  rotate(orgId: string): number {
    const stored = this.read(orgId) ?? { current: 0, keys: {} };
    const version = Math.max(0, ...Object.keys(stored.keys).map(Number)) + 1;
    const keys = { ...stored.keys, [String(version)]: randomBytes(32).toString('hex') };
    this.keys.store.set(masterKeySecretName(orgId), JSON.stringify({ current: version, keys }));
    return version;
  }

  private read(orgId: string): StoredKeys | null {
    const raw = this.keys.store.get(masterKeySecretName(orgId));
    if (raw === null) {
      const derived = this.keys.derived(masterKeySecretName(orgId));
      return derived && { current: 1, keys: { '1': derived.toString('hex') } };
    }
    if (/^[0-9a-f]+$/i.test(raw.trim())) return { current: 1, keys: { '1': raw.trim() } };
    try {
      const parsed = JSON.parse(raw) as StoredKeys;
      return parsed && typeof parsed.current === 'number' && parsed.keys && typeof parsed.keys === 'object' ? parsed : null;
    } catch {
      return null;
    }
  }
}
