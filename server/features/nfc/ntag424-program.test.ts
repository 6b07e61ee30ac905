// Personalising an NTAG 424 DNA, APDU by APDU against the virtual tag (test/nfc/virtual-ntag424.ts,
// whose crypto is written separately from the server's): from factory-new, the result a phone
// reads on each tap verifies with the organization master key; halfway tags are finished; tags
// keyed by someone else are refused with `wrong_key`.
import { describe, expect, it } from 'vitest';
import { ATR_ISO_DEP, VirtualTag } from '../../../test/nfc/virtual-tag.ts';
import { VirtualNtag424 } from '../../../test/nfc/virtual-ntag424.ts';
import { decodeUriMessage } from './ndef.ts';
import { checkSunMessage, ntag424KeySet, parseSunParams, SUN_URL_TEMPLATE_SUFFIX } from './ntag424/index.ts';
import { personaliseNtag424 } from './ntag424-program.ts';
import { inspectTag, NfcError, type Transmit } from './program.ts';

const TEMPLATE = `https://wm.example/v/7QK2M9XD${SUN_URL_TEMPLATE_SUFFIX}`;
const MASTER = Buffer.from('00112233445566778899AABBCCDDEEFF', 'hex');
const OTHER_MASTER = Buffer.from('FFEEDDCCBBAA99887766554433221100', 'hex');

function direct(tag: { apdu(cmd: Buffer): Buffer | null }): Transmit {
  return async (apdu) => tag.apdu(apdu) ?? Buffer.alloc(0);
}

function keysFor(tag: VirtualNtag424, master = MASTER, version = 1) {
  return { keys: ntag424KeySet(master, tag.uid).keys, version };
}

async function personalise(tag: VirtualNtag424, master = MASTER) {
  const tx = direct(tag);
  const snap = await inspectTag(tx, tag.atr);
  return personaliseNtag424(tx, snap.ntag424!, tag.uid, TEMPLATE, keysFor(tag, master));
}

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    return err instanceof NfcError ? err.code : String(err);
  }
}

/** What a phone reads on a tap, checked as the scan handler checks it. */
function tapAndCheck(tag: VirtualNtag424, master = MASTER) {
  const url = decodeUriMessage(tag.tap())!;
  const q = new URL(url).searchParams;
  return { url, check: checkSunMessage(master, parseSunParams(q.get('picc'), q.get('cmac'))!) };
}

describe('NTAG 424 DNA personalisation', () => {
  it('is detected as an NTAG 424 DNA (5 APDUs), a phone or another ISO-DEP card is not', async () => {
    const tag = new VirtualNtag424();
    const snap = await inspectTag(direct(tag), tag.atr);
    expect(snap.info).toMatchObject({ supported: true, type: 'NTAG 424 DNA', dataAreaBytes: 254, content: { kind: 'blank' }, ntag424: { sdm: false, keyVersion: null } });
    expect(snap.inspectApdus).toBe(5);
    const phone = new VirtualTag({ atr: ATR_ISO_DEP });
    expect((await inspectTag(direct(phone), phone.atr)).info.refusal?.code).toBe('unsupported_card');
  });

  it('from factory-new: 12 APDUs after detection, per-tag keys, SDM on, and every tap verifies with a higher counter', async () => {
    const tag = new VirtualNtag424();
    const { outcome } = await personalise(tag);
    expect(outcome).toMatchObject({ type: 'NTAG 424 DNA', recognised: false, keyVersion: 1, readCounter: 1 });
    // 2 NDEF writes, 2 authentication, 1 ChangeFileSettings, 5 ChangeKey, GetFileSettings + ReadBinary to verify.
    expect(outcome.apdus).toBe(12);
    expect(tag.stats.apdus).toBe(17);
    const keys = ntag424KeySet(MASTER, tag.uid).keys;
    expect(tag.keys).toEqual(keys);
    expect(tag.keyVersions).toEqual([1, 1, 1, 1, 1]);
    expect(decodeUriMessage(tag.storedNdef())).toBe(TEMPLATE);
    expect(tag.ndefFile.settings).toMatchObject({ read: 0xe, write: 0, readWrite: 0, change: 0, sdm: { options: 0xc1, metaRead: 1, fileRead: 2 } });
    const counters = [];
    for (let i = 0; i < 3; i++) {
      const { url, check } = tapAndCheck(tag);
      expect(url.startsWith('https://wm.example/v/7QK2M9XD?picc=')).toBe(true);
      expect(check.ok).toBe(true);
      if (check.ok) {
        expect(check.uid).toEqual(tag.uid);
        counters.push(check.readCounter);
      }
    }
    expect(counters).toEqual([2, 3, 4]);
    expect(tapAndCheck(tag, OTHER_MASTER).check.ok).toBe(false);
  });

  it('the file cannot be rewritten in the field any more: an ISO write is refused', () => {
    const tag = new VirtualNtag424();
    return personalise(tag).then(() => {
      tag.tap();
      expect(tag.apdu(Buffer.from([0x00, 0xd6, 0x00, 0x00, 0x02, 0x00, 0x00]))!.toString('hex')).toBe('6982');
    });
  });

  it('presented again with the same URL and keys: recognised from the detection read, nothing written', async () => {
    const tag = new VirtualNtag424();
    await personalise(tag);
    const before = tag.stats.apdus;
    const { outcome } = await personalise(tag);
    expect(outcome).toMatchObject({ recognised: true, apdus: 0, pagesWritten: 0 });
    expect(tag.stats.apdus - before).toBe(6); // detection with SDM on: + GetKeyVersion
  });

  it('a personalised tag written again for another node: opened with key 0, rewritten, closed, and its taps carry the new URL', async () => {
    const tag = new VirtualNtag424();
    await personalise(tag);
    const other = `https://wm.example/v/ZZZZ2222${SUN_URL_TEMPLATE_SUFFIX}`;
    const tx = direct(tag);
    const { outcome } = await personaliseNtag424(tx, (await inspectTag(tx, tag.atr)).ntag424!, tag.uid, other, keysFor(tag));
    expect(outcome).toMatchObject({ recognised: false, pagesWritten: 2 });
    expect(decodeUriMessage(tag.storedNdef())).toBe(other);
    expect(tag.ndefFile.settings).toMatchObject({ write: 0, sdm: { options: 0xc1 } });
    const { url, check } = tapAndCheck(tag);
    expect(url.startsWith('https://wm.example/v/ZZZZ2222?picc=')).toBe(true);
    expect(check.ok).toBe(true);
  });

  it('pulled before key 0 changed: the next presentation finishes it, skipping the keys already changed', async () => {
    const tag = new VirtualNtag424();
    tag.pullAt((cmd) => cmd[0] === 0x90 && cmd[1] === 0xc4 && cmd[5] === 0x03); // ChangeKey 3: keys 1 and 2 done
    const tx = direct(tag);
    const snap = await inspectTag(tx, tag.atr);
    expect(await code(personaliseNtag424(tx, snap.ntag424!, tag.uid, TEMPLATE, keysFor(tag)))).toBe('tag_removed');
    expect(tag.keyVersions).toEqual([0, 1, 1, 0, 0]);
    const { outcome } = await personalise(tag);
    expect(tag.keyVersions).toEqual([1, 1, 1, 1, 1]);
    expect(tag.keys).toEqual(ntag424KeySet(MASTER, tag.uid).keys);
    // Authentication, 4 GetKeyVersion (MAC mode), 3 ChangeKey, and the 2 verify reads.
    expect(outcome.apdus).toBe(11);
    expect(tapAndCheck(tag).check.ok).toBe(true);
  });

  it('refuses a tag keyed with another master key, and one whose factory key was changed by someone else', async () => {
    const other = new VirtualNtag424();
    await personalise(other, OTHER_MASTER);
    const e = await personalise(other).catch((err: NfcError) => err);
    expect(e).toBeInstanceOf(NfcError);
    expect((e as NfcError).code).toBe('wrong_key');
    const keyed = new VirtualNtag424({ keys: [1, 2, 3, 4, 5].map((n) => Buffer.alloc(16, n)) });
    const r = await personalise(keyed).catch((err: NfcError) => err);
    expect((r as NfcError).code).toBe('wrong_key');
    expect((r as NfcError).message).toMatch(/not factory-new/);
    expect(keyed.storedNdef().length).toBeGreaterThan(0); // the NDEF write (free access) came first
  });
});
