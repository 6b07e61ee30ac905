// The desktop app's secret store (the remote key of a paired site): values encrypted with the
// OS keychain through Electron's safeStorage, in <userData>/secrets.json (mode 0600). Plain
// module: index.ts passes Electron's safeStorage, the tests a stand-in.
import { FileSecretStore, type SecretStore } from '../server/platform/secrets.ts';

/** The part of Electron's safeStorage used here. */
export interface SafeStorageLike {
  isEncryptionAvailable(): boolean;
  encryptString(plain: string): Buffer;
  decryptString(encrypted: Buffer): string;
  /** Linux only: 'basic_text' means no keychain (a fixed, public password): not acceptable. */
  getSelectedStorageBackend?(): string;
}

const PREFIX = 'safeStorage:';

export function keychainProblem(safe: SafeStorageLike): string | null {
  if (!safe.isEncryptionAvailable()) return 'the system keychain is not available';
  if (safe.getSelectedStorageBackend?.() === 'basic_text') return 'no system keychain was found (Electron would only obfuscate the key)';
  return null;
}

export function keychainSecretStore(file: string, safe: SafeStorageLike): SecretStore {
  return new FileSecretStore(file, {
    encode: (value) => {
      const problem = keychainProblem(safe);
      // Refusing here makes the pairing fail with this message and store nothing.
      if (problem) throw new Error(`Cannot keep the remote key safely: ${problem}. Start the server with --remote-key instead (waymark serve).`);
      return PREFIX + safe.encryptString(value).toString('base64');
    },
    decode: (stored) => {
      if (!stored.startsWith(PREFIX) || keychainProblem(safe)) return null;
      try {
        return safe.decryptString(Buffer.from(stored.slice(PREFIX.length), 'base64'));
      } catch {
        return null; // encrypted under another OS account or keychain: pair again
      }
    },
  });
}
