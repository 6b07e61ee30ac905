import { closeSync, fsyncSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Credentials the instance must present later (the remote key of a paired site). Kept out of the
 * database, which is copied into backups and exports in clear. Injected into createApp: the
 * server defaults to a 0600 file in the data directory, the desktop app encrypts with the OS
 * keychain (main/secrets.ts).
 */
export interface SecretStore {
  get(name: string): string | null;
  /** Throws when the value cannot be kept (the caller then stores nothing else either). */
  set(name: string, value: string): void;
  delete(name: string): void;
}

/** How values are written to the file: as they are, or encrypted (the desktop app). */
export interface SecretCodec {
  encode(value: string): string;
  /** Null when the stored value cannot be read back (e.g. encrypted under another OS account). */
  decode(stored: string): string | null;
}

const plain: SecretCodec = { encode: (v) => v, decode: (v) => v };

/**
 * A JSON file of name → value, readable by its owner only (mode 0600), replaced atomically
 * (write a temp file, fsync, rename), so a crash leaves the old or the new file, never half of one.
 */
export class FileSecretStore implements SecretStore {
  readonly file: string;
  private readonly codec: SecretCodec;

  constructor(file: string, codec: SecretCodec = plain) {
    this.file = file;
    this.codec = codec;
  }

  get(name: string): string | null {
    const stored = this.read()[name];
    return typeof stored === 'string' ? this.codec.decode(stored) : null;
  }

  set(name: string, value: string): void {
    const all = this.read();
    all[name] = this.codec.encode(value);
    this.write(all);
  }

  delete(name: string): void {
    const all = this.read();
    if (!(name in all)) return;
    delete all[name];
    this.write(all);
  }

  private read(): Record<string, unknown> {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw err;
    }
    try {
      const parsed = JSON.parse(text) as unknown;
      return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
    } catch {
      throw new Error(`${this.file} is not valid JSON: fix or remove it (it holds the remote key of a paired site)`);
    }
  }

  private write(all: Record<string, unknown>): void {
    const tmp = `${this.file}.tmp`;
    try {
      unlinkSync(tmp); // a leftover from a crash may have another mode; the flags below only apply to a new file
    } catch {
      // none
    }
    const fd = openSync(tmp, 'wx', 0o600);
    try {
      writeSync(fd, `${JSON.stringify(all, null, 2)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.file);
  }
}

/** For instances without a data directory (in-memory databases in tests): forgotten at exit. */
export class MemorySecretStore implements SecretStore {
  private readonly values = new Map<string, string>();
  get(name: string): string | null {
    return this.values.get(name) ?? null;
  }
  set(name: string, value: string): void {
    this.values.set(name, value);
  }
  delete(name: string): void {
    this.values.delete(name);
  }
}

/** The server's default: `<dataDir>/secrets.json` (mode 0600), or memory without a data directory. */
export function defaultSecretStore(dataDir: string): SecretStore {
  return dataDir ? new FileSecretStore(join(dataDir, 'secrets.json')) : new MemorySecretStore();
}
