import { describe, expect, it } from 'vitest';
import { sunQueryFor } from '../../../nfc/index.ts';
import { MemorySecretStore } from '../../../../platform/secrets.ts';
import { MasterKeys } from '../../masterKeys.ts';
import { NTAG424_KIND, ntag424Kind } from './kind.ts';

const ORG = 'org-1';
const UID = Buffer.from('04112233445566', 'hex');
const query = (q: { picc: string; cmac: string }) => new URLSearchParams({ picc: q.picc, cmac: q.cmac });

describe('ntag424 tap proof kind: master key versions', () => {
  it('after a rotation, tags keyed from the old version still verify and name their version; new tags use the new one', () => {
    const keys = new MasterKeys(new MemorySecretStore());
    const kind = ntag424Kind(keys);
    const v1 = keys.current(NTAG424_KIND, ORG);
    expect(v1.version).toBe(1);
    const v2 = keys.rotate(NTAG424_KIND, ORG);
    expect(v2.version).toBe(2);
    expect(keys.current(NTAG424_KIND, ORG).key).toEqual(v2.key);

    expect(kind.check(ORG, query(sunQueryFor(v1.key, { uid: UID, readCounter: 9 })))).toEqual({ ok: true, uid: '04112233445566', counter: 9, keyVersion: 1 });
    expect(kind.check(ORG, query(sunQueryFor(v2.key, { uid: UID, readCounter: 10 })))).toEqual({ ok: true, uid: '04112233445566', counter: 10, keyVersion: 2 });
    // Another organization has no key; a key that is not the organization's decrypts nothing.
    expect(kind.check('org-2', query(sunQueryFor(v1.key, { uid: UID, readCounter: 9 })))).toEqual({ ok: false, reason: 'no_key' });
    const stranger = Buffer.from('ffeeddccbbaa99887766554433221100', 'hex');
    expect(kind.check(ORG, query(sunQueryFor(stranger, { uid: UID, readCounter: 9 })))).toMatchObject({ ok: false });
    expect(kind.check(ORG, new URLSearchParams({ picc: 'zz', cmac: '00' }))).toEqual({ ok: false, reason: 'malformed' });
  });

  it('a version whose key is replaced (an operator restoring another backup) checks with the new key, not the cached derivations of the old', () => {
    const keys = new MasterKeys(new MemorySecretStore());
    const kind = ntag424Kind(keys);
    const first = Buffer.from('00112233445566778899aabbccddeeff', 'hex');
    const second = Buffer.from('0f1e2d3c4b5a69788796a5b4c3d2e1f0', 'hex');
    keys.import(NTAG424_KIND, ORG, 1, first);
    expect(kind.check(ORG, query(sunQueryFor(first, { uid: UID, readCounter: 1 })))).toMatchObject({ ok: true, keyVersion: 1 });
    keys.import(NTAG424_KIND, ORG, 1, second);
    expect(kind.check(ORG, query(sunQueryFor(first, { uid: UID, readCounter: 2 })))).toMatchObject({ ok: false });
    expect(kind.check(ORG, query(sunQueryFor(second, { uid: UID, readCounter: 3 })))).toEqual({ ok: true, uid: '04112233445566', counter: 3, keyVersion: 1 });
    // The same tag again under the first key's cache entry: still its own derivation.
    keys.import(NTAG424_KIND, ORG, 1, first);
    expect(kind.check(ORG, query(sunQueryFor(first, { uid: UID, readCounter: 4 })))).toMatchObject({ ok: true, counter: 4 });
  });
});
