import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { keychainProblem, keychainSecretStore, type SafeStorageLike } from './secrets.ts';

// Electron cannot run here: a stand-in with safeStorage's contract (a reversible transform bound
// to one "account"; decryptString throws for data of another one).
function fakeSafeStorage(account: string, options: { available?: boolean; backend?: string } = {}): SafeStorageLike {
  return {
    isEncryptionAvailable: () => options.available ?? true,
    getSelectedStorageBackend: () => options.backend ?? 'gnome_libsecret',
    encryptString: (plain) => Buffer.from(`${account}|${Buffer.from(plain).toString('base64')}`).reverse(),
    decryptString: (enc) => {
      const [who, body] = Buffer.from(enc).reverse().toString().split('|');
      if (who !== account || body === undefined) throw new Error('Error while decrypting the ciphertext provided to safeStorage.decryptString.');
      return Buffer.from(body, 'base64').toString();
    },
  };
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function file(): string {
  const d = mkdtempSync(join(tmpdir(), 'waymark-main-secrets-'));
  dirs.push(d);
  return join(d, 'secrets.json');
}

describe('keychain secret store', () => {
  it('writes the key encrypted, owner-only, and reads it back', () => {
    const f = file();
    const store = keychainSecretStore(f, fakeSafeStorage('me'));
    store.set('sync.remote_key', 'wmk_secret123');
    const text = readFileSync(f, 'utf8');
    expect(text).not.toContain('wmk_secret123');
    expect(JSON.parse(text)['sync.remote_key']).toMatch(/^safeStorage:/);
    expect(statSync(f).mode & 0o777).toBe(0o600);
    expect(keychainSecretStore(f, fakeSafeStorage('me')).get('sync.remote_key')).toBe('wmk_secret123');
    store.delete('sync.remote_key');
    expect(store.get('sync.remote_key')).toBeNull();
  });

  it('refuses to store without a real keychain, and writes nothing', () => {
    for (const safe of [fakeSafeStorage('me', { available: false }), fakeSafeStorage('me', { backend: 'basic_text' })]) {
      const f = file();
      expect(() => keychainSecretStore(f, safe).set('k', 'v')).toThrow(/Cannot keep the remote key safely: .*--remote-key/);
      expect(() => statSync(f)).toThrow(/ENOENT/);
    }
    expect(keychainProblem(fakeSafeStorage('me'))).toBeNull();
  });

  it('treats a value it cannot decrypt (another account, a plain value) as absent', () => {
    const f = file();
    keychainSecretStore(f, fakeSafeStorage('me')).set('k', 'v');
    expect(keychainSecretStore(f, fakeSafeStorage('someone else')).get('k')).toBeNull();
    expect(keychainSecretStore(f, fakeSafeStorage('me', { available: false })).get('k')).toBeNull();
  });
});
