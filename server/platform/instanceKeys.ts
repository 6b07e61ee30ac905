import { hkdfSync, randomBytes } from 'node:crypto';
import { SecretCipher } from './secretCipher.ts';
import type { SecretStore } from './secrets.ts';

/**
 * Secret store entry of the operator's root key (32 random bytes, hex), made by
 * `waymark secrets init` and given to every process of a PostgreSQL instance (`--secrets`).
 */
export const ROOT_KEY_SECRET = 'instance.root_key';

/** Secret store entry of the key that seals webhook signing secrets in the database. */
export const WEBHOOK_DATA_KEY_SECRET = 'webhooks.data_key';

/** The root key in `store`, or null; a malformed one is refused rather than ignored. */
export function rootKeyOf(store: SecretStore): Buffer | null {
  const hex = store.get(ROOT_KEY_SECRET);
  if (hex === null) return null;
  if (!/^[0-9a-f]{64}$/i.test(hex)) throw new Error(`${ROOT_KEY_SECRET} in the secret store is not 64 hex digits (make one with waymark secrets init)`);
  return Buffer.from(hex, 'hex');
}

/**
 * Where processes share a PostgreSQL database, each one inventing its own keys would seal and sign
 * with keys the others do not have: a process without the operator's root key refuses to start.
 */
export function requireRootKey(store: SecretStore): void {
  if (rootKeyOf(store) === null) {
    throw new Error(
      `no ${ROOT_KEY_SECRET} in the secret store: on PostgreSQL every process is given the same secrets file (waymark secrets init --file FILE, then --secrets FILE or WAYMARK_SECRETS_FILE; docs/deploy.md)`,
    );
  }
}

/**
 * Keys the instance makes for itself (the webhook data key, NTAG21x master keys), 32 bytes each.
 * A value kept in the store under the name wins (keys made before a root key existed, or copied by
 * `waymark migrate`). Otherwise, with a root key, the key is derived from it (HKDF-SHA256, the
 * name as info): every process given the same root key computes the same key, none writes one.
 * Without a root key (one SQLite process, the desktop app) a random key is made and kept.
 */
export class InstanceKeys {
  readonly store: SecretStore;
  private readonly root: Buffer | null;

  constructor(store: SecretStore, root: Buffer | null) {
    this.store = store;
    this.root = root;
  }

  /** The key named `name`; null when none exists and `create` is false. */
  key(name: string, create: boolean): Buffer | null {
    const stored = this.store.get(name);
    if (stored !== null) return Buffer.from(stored, 'hex');
    const derived = this.derived(name);
    if (derived) return derived;
    if (!create) return null;
    const key = randomBytes(32);
    this.store.set(name, key.toString('hex'));
    return key;
  }

  /** The key named `name` derived from the root key; null without one. */
  derived(name: string): Buffer | null {
    return this.root && Buffer.from(hkdfSync('sha256', this.root, Buffer.alloc(0), `waymark ${name}`, 32));
  }

  /** A cipher under the key named `name`, made (or derived) when it first seals or opens a value. */
  cipher(name: string): SecretCipher {
    return new SecretCipher(() => this.key(name, true)!);
  }
}
