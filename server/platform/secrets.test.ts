import { chmodSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDataDir } from '../../test/support/server.ts';
import { FileSecretStore, MemorySecretStore, defaultSecretStore } from './secrets.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function dir(): string {
  const d = tempDataDir('waymark-secrets-');
  dirs.push(d);
  return d;
}

describe('FileSecretStore', () => {
  it('keeps values in an owner-only JSON file and reads them back in a new instance', () => {
    const d = dir();
    const file = join(d, 'secrets.json');
    const store = new FileSecretStore(file);
    expect(store.get('a')).toBeNull();
    store.set('a', 'one');
    store.set('b', 'two');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(new FileSecretStore(file).get('a')).toBe('one');
    store.delete('a');
    store.delete('missing');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ b: 'two' });
  });

  it('replaces a leftover temp file of another mode instead of writing through it', () => {
    const d = dir();
    const file = join(d, 'secrets.json');
    writeFileSync(`${file}.tmp`, 'half');
    chmodSync(`${file}.tmp`, 0o644);
    new FileSecretStore(file).set('k', 'v');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(new FileSecretStore(file).get('k')).toBe('v');
  });

  it('refuses to overwrite a damaged file (it may hold a key someone needs)', () => {
    const file = join(dir(), 'secrets.json');
    writeFileSync(file, '{not json');
    expect(() => new FileSecretStore(file).set('k', 'v')).toThrow(/not valid JSON/);
    expect(readFileSync(file, 'utf8')).toBe('{not json');
  });

  it('runs values through a codec (the desktop app encrypts)', () => {
    const file = join(dir(), 'secrets.json');
    const store = new FileSecretStore(file, { encode: (v) => Buffer.from(v).toString('hex'), decode: (s) => (/^[0-9a-f]*$/.test(s) ? Buffer.from(s, 'hex').toString() : null) });
    store.set('k', 'secret');
    expect(readFileSync(file, 'utf8')).not.toContain('secret');
    expect(store.get('k')).toBe('secret');
  });

  it('defaults to <dataDir>/secrets.json, or memory without a data directory', () => {
    const d = dir();
    expect((defaultSecretStore(d) as FileSecretStore).file).toBe(join(d, 'secrets.json'));
    expect(defaultSecretStore('')).toBeInstanceOf(MemorySecretStore);
  });
});
