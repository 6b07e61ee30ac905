import { randomBytes } from 'node:crypto';
import type { SecretStore } from '../../platform/secrets.ts';

/**
 * Organization master keys for tag key diversification (AN10922), kept in a secret store, never
 * in the database, an API answer or a log line. Versioned: rotating adds a version and makes it
 * current; tags keyed from an older version keep verifying until they are re-keyed (the tag row
 * says which version). Losing every copy of a version means its tags can no longer be verified
 * or re-keyed (docs/nfc.md).
 *
 * One secret per organization and kind: `tap-proof-master-keys:<kind>:<orgId>` =
 * `{"current": 2, "keys": {"1": "<32 hex>", "2": "<32 hex>"}}`.
 */
export interface MasterKeyVersion {
  version: number;
  key: Buffer;
}

interface StoredKeys {
  current: number;
  keys: Record<string, string>;
}

/** How long an organization's keys are trusted from memory before the store is read again. */
const RELOAD_MS = 10_000;

export class MasterKeys {
  private readonly store: SecretStore;
  private readonly now: () => number;
  /** By kind, then organization: versions() runs on every verified scan, so no secret name is built for it. */
  private readonly cache = new Map<string, Map<string, { at: number; versions: MasterKeyVersion[]; current: number }>>();

  constructor(store: SecretStore, now: () => number = Date.now) {
    this.store = store;
    this.now = now;
  }

  private secretName(kind: string, orgId: string): string {
    return `tap-proof-master-keys:${kind}:${orgId}`;
  }

  /** Every version of the organization's keys, newest first (read again at most every 10 s, so a rotation by another process is seen). */
  versions(kind: string, orgId: string): MasterKeyVersion[] {
    let ofKind = this.cache.get(kind);
    const cached = ofKind?.get(orgId);
    if (cached && this.now() - cached.at < RELOAD_MS) return cached.versions;
    const stored = this.read(this.secretName(kind, orgId));
    const versions = stored
      ? Object.entries(stored.keys)
          .map(([v, hex]) => ({ version: Number(v), key: Buffer.from(hex, 'hex') }))
          .filter((k) => Number.isInteger(k.version) && k.key.length === 16)
          .sort((a, b) => b.version - a.version)
      : [];
    if (!ofKind) this.cache.set(kind, (ofKind = new Map()));
    ofKind.set(orgId, { at: this.now(), versions, current: stored?.current ?? 0 });
    return versions;
  }

  /** The version new tags are keyed from, created (random, 16 bytes) when the organization has none. */
  current(kind: string, orgId: string): MasterKeyVersion {
    const name = this.secretName(kind, orgId);
    const stored = this.read(name);
    if (stored && stored.keys[String(stored.current)]) {
      // A version rotated in by another process: scans must know it as soon as a tag is keyed from it here.
      if (this.cache.get(kind)?.get(orgId)?.versions.some((v) => v.version === stored.current) === false) this.forget(kind, orgId);
      return { version: stored.current, key: Buffer.from(stored.keys[String(stored.current)]!, 'hex') };
    }
    return this.rotate(kind, orgId);
  }

  /** The current version's number (read from the store), null when there is none yet: creates nothing. */
  currentVersion(kind: string, orgId: string): number | null {
    const stored = this.read(this.secretName(kind, orgId));
    return stored && stored.keys[String(stored.current)] ? stored.current : null;
  }

  /** One stored version (read from the store, not the cache: a re-key must not miss a version just added), or null. */
  version(kind: string, orgId: string, version: number): MasterKeyVersion | null {
    const hex = this.read(this.secretName(kind, orgId))?.keys[String(version)];
    const key = hex ? Buffer.from(hex, 'hex') : null;
    return key && key.length === 16 ? { version, key } : null;
  }

  /** A new random version becomes current; older versions stay for the tags keyed from them. */
  rotate(kind: string, orgId: string): MasterKeyVersion {
    const name = this.secretName(kind, orgId);
    const stored = this.read(name) ?? { current: 0, keys: {} };
    const version = Math.max(0, ...Object.keys(stored.keys).map(Number)) + 1;
    const key = randomBytes(16);
    this.store.set(name, JSON.stringify({ current: version, keys: { ...stored.keys, [String(version)]: key.toString('hex') } }));
    this.forget(kind, orgId);
    return { version, key };
  }

  /** Puts a known key (tests, or an operator restoring a backup of the key). */
  import(kind: string, orgId: string, version: number, key: Buffer, makeCurrent = true): void {
    const name = this.secretName(kind, orgId);
    const stored = this.read(name) ?? { current: 0, keys: {} };
    this.store.set(name, JSON.stringify({ current: makeCurrent ? version : stored.current, keys: { ...stored.keys, [String(version)]: key.toString('hex') } }));
    this.forget(kind, orgId);
  }

  private forget(kind: string, orgId: string): void {
    this.cache.get(kind)?.delete(orgId);
  }

  private read(name: string): StoredKeys | null {
    const raw = this.store.get(name);
    if (!raw) return null;
    try {
      const parsed = JSON.parse(raw) as StoredKeys;
      return parsed && typeof parsed.current === 'number' && parsed.keys && typeof parsed.keys === 'object' ? parsed : null;
    } catch {
      return null;
    }
  }
}
