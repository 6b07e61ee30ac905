import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TagPasswords } from '../features/nfc/index.ts';
import { InstanceKeys, requireRootKey, ROOT_KEY_SECRET, rootKeyOf, WEBHOOK_DATA_KEY_SECRET } from './instanceKeys.ts';
import { SecretUnreadableError } from './secretCipher.ts';
import { FileSecretStore, MemorySecretStore } from './secrets.ts';

const UID = '04:a1:b2:c3:d4:e5:80';

describe('InstanceKeys', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  /** A secrets file of its own, as each process on another machine has. */
  const processFile = (root: Buffer | null) => {
    const dir = mkdtempSync(join(tmpdir(), 'waymark-keys-'));
    dirs.push(dir);
    const store = new FileSecretStore(join(dir, 'secrets.json'));
    if (root) store.set(ROOT_KEY_SECRET, root.toString('hex'));
    return store;
  };

  it('derives the same keys in every process given the same root key, and writes none', () => {
    const root = randomBytes(32);
    const [a, b] = [processFile(root), processFile(root)];
    const [ka, kb] = [new InstanceKeys(a, rootKeyOf(a)), new InstanceKeys(b, rootKeyOf(b))];
    expect(ka.key(WEBHOOK_DATA_KEY_SECRET, true)).toEqual(kb.key(WEBHOOK_DATA_KEY_SECRET, true));
    expect(ka.key(WEBHOOK_DATA_KEY_SECRET, true)).not.toEqual(ka.key('nfc.ntag21x_master_key.org-1', true));
    expect(a.get(WEBHOOK_DATA_KEY_SECRET)).toBeNull();
    // A value sealed by one process opens in the other.
    const sealed = ka.cipher(WEBHOOK_DATA_KEY_SECRET).seal('whsec_x', 'wh_1');
    expect(kb.cipher(WEBHOOK_DATA_KEY_SECRET).open(sealed, 'wh_1')).toBe('whsec_x');
    // Another root key: another data key, and the value does not open.
    const other = processFile(randomBytes(32));
    expect(() => new InstanceKeys(other, rootKeyOf(other)).cipher(WEBHOOK_DATA_KEY_SECRET).open(sealed, 'wh_1')).toThrow(SecretUnreadableError);
  });

  it("gives an NTAG21x tag the same password whichever process writes it, without a stored master key", () => {
    const root = randomBytes(32);
    const [a, b] = [processFile(root), processFile(root)];
    const pa = new TagPasswords(new InstanceKeys(a, rootKeyOf(a))).passwordFor('org-1', UID, { create: true });
    const pb = new TagPasswords(new InstanceKeys(b, rootKeyOf(b))).passwordFor('org-1', UID);
    expect(pa).toMatchObject({ version: 1 });
    expect(pb).toEqual(pa);
    expect(a.get('nfc.ntag21x_master_key.org-1')).toBeNull();
    expect(new TagPasswords(new InstanceKeys(b, rootKeyOf(b))).passwordFor('org-2', UID, { create: true })).not.toEqual(pa);
    // A rotation (waymark tap-keys rotate --kind ntag21x on the shared file) keeps the derived version 1.
    const rotated = new TagPasswords(new InstanceKeys(a, rootKeyOf(a)));
    expect(rotated.rotate('org-1')).toBe(2);
    expect(rotated.passwordFor('org-1', UID, { version: 1 })).toEqual(pa);
    expect(rotated.passwordFor('org-1', UID)).toMatchObject({ version: 2 });
    expect(rotated.passwordFor('org-1', UID)?.pwd).not.toBe(pa!.pwd);
  });

  it('keeps using a key stored before the root key existed (a SQLite instance moved to PostgreSQL)', () => {
    const store = new MemorySecretStore();
    const made = new InstanceKeys(store, null).key('nfc.ntag21x_master_key.org-1', true)!;
    expect(store.get('nfc.ntag21x_master_key.org-1')).toBe(made.toString('hex'));
    store.set(ROOT_KEY_SECRET, randomBytes(32).toString('hex'));
    expect(new InstanceKeys(store, rootKeyOf(store)).key('nfc.ntag21x_master_key.org-1', false)).toEqual(made);
  });

  it('without a root key makes a random key once and keeps it; none when not asked to create', () => {
    const store = new MemorySecretStore();
    const keys = new InstanceKeys(store, null);
    expect(keys.key('x', false)).toBeNull();
    const first = keys.key('x', true);
    expect(first).toHaveLength(32);
    expect(keys.key('x', false)).toEqual(first);
  });

  it('refuses a missing or malformed root key', () => {
    const store = new MemorySecretStore();
    expect(() => requireRootKey(store)).toThrow(/no instance\.root_key/);
    store.set(ROOT_KEY_SECRET, 'not hex');
    expect(() => rootKeyOf(store)).toThrow(/64 hex digits/);
    store.set(ROOT_KEY_SECRET, randomBytes(32).toString('hex'));
    expect(() => requireRootKey(store)).not.toThrow();
  });
});
