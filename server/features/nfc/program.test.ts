import { describe, expect, it } from 'vitest';
import { ATR_ISO_DEP, ATR_MIFARE_CLASSIC_1K, VirtualTag } from '../../../test/nfc/virtual-tag.ts';
import { decodeUriMessage, encodeUriMessage } from './ndef.ts';
import { inspectTag, NfcError, writeUriToTag, type Transmit } from './program.ts';

/** The virtual tag answered in-process (no PC/SC): for the pure logic. */
function direct(tag: VirtualTag): Transmit {
  return async (apdu) => {
    const r = tag.apdu(apdu);
    if (!r) throw new Error('tag gone');
    return r;
  };
}

const URL = 'https://wm.example/v/ABCD1234?nfc';

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    return err instanceof NfcError ? err.code : String(err);
  }
}

describe('programming a Type 2 tag', () => {
  for (const model of ['NTAG213', 'NTAG215', 'NTAG216'] as const) {
    it(`writes and verifies a URI on ${model} with the minimum APDUs`, async () => {
      const tag = new VirtualTag({ model });
      const tx = direct(tag);
      const snap = await inspectTag(tx, tag.atr);
      expect(snap.info).toMatchObject({ supported: true, type: model });
      const out = await writeUriToTag(tx, snap, URL);
      expect(decodeUriMessage(tag.ndefMessage()!)).toBe(URL);
      expect(tag.ndefMessage()).toEqual(encodeUriMessage(URL));
      const pages = Math.ceil((2 + encodeUriMessage(URL).length + 1) / 4);
      // Factory-formatted: page 4 already holds an empty TLV, so one write per page + 1 for the length.
      expect(out.pagesWritten).toBe(pages);
      expect(out.apdus).toBe(pages + Math.ceil(pages / 4));
    });
  }

  it('rewrites a used tag safely and the result reads back', async () => {
    const tag = new VirtualTag();
    const tx = direct(tag);
    await writeUriToTag(tx, await inspectTag(tx, tag.atr), 'https://wm.example/v/AAAAAAAA?nfc');
    const snap = await inspectTag(tx, tag.atr);
    const out = await writeUriToTag(tx, snap, URL);
    expect(decodeUriMessage(tag.ndefMessage()!)).toBe(URL);
    expect(tag.writeLog.slice(-out.pagesWritten)[0]).toBe(4); // length 0 first
  });

  it('refuses unsupported cards, read-only, locked and too small tags', async () => {
    for (const atr of [ATR_MIFARE_CLASSIC_1K, ATR_ISO_DEP]) {
      const tag = new VirtualTag({ atr });
      const snap = await inspectTag(direct(tag), tag.atr);
      expect(snap.info.refusal?.code).toBe('unsupported_card');
      expect(await codeOf(writeUriToTag(direct(tag), snap, URL))).toBe('unsupported_card');
    }
    const ro = new VirtualTag({ readOnly: true });
    expect(await codeOf(inspectTag(direct(ro), ro.atr).then((s) => writeUriToTag(direct(ro), s, URL)))).toBe('read_only');
    const locked = new VirtualTag({ lockedPages: true });
    expect(await codeOf(inspectTag(direct(locked), locked.atr).then((s) => writeUriToTag(direct(locked), s, URL)))).toBe('read_only');
    const small = new VirtualTag({ ccSize: 2 });
    expect(await codeOf(inspectTag(direct(small), small.atr).then((s) => writeUriToTag(direct(small), s, URL)))).toBe('too_small');
    expect(small.stats.writes).toBe(0);
    const blank = new VirtualTag({ blank: true });
    expect((await inspectTag(direct(blank), blank.atr)).info.refusal?.code).toBe('not_formatted');
  });

  it('locks the tag permanently when asked', async () => {
    const tag = new VirtualTag({ model: 'NTAG215' });
    const tx = direct(tag);
    const out = await writeUriToTag(tx, await inspectTag(tx, tag.atr), URL, { lock: true });
    expect(out.locked).toBe(true);
    const again = await inspectTag(tx, tag.atr);
    expect(again.info.refusal?.code).toBe('read_only');
    expect(decodeUriMessage(tag.ndefMessage()!)).toBe(URL);
  });

  it('a tag that acknowledges the lock writes but ignores them is reported lock_failed, URL intact and still writable', async () => {
    const tag = new VirtualTag({ ignoresLocks: true });
    const tx = direct(tag);
    expect(await codeOf(inspectTag(tx, tag.atr).then((s) => writeUriToTag(tx, s, URL, { lock: true })))).toBe('lock_failed');
    expect(decodeUriMessage(tag.ndefMessage()!)).toBe(URL);
    expect((await inspectTag(tx, tag.atr)).info.readOnly).toBe(false);
  });

  it('a tag pulled mid-write holds an empty NDEF message, and the retry succeeds', async () => {
    const tag = new VirtualTag();
    const tx = direct(tag);
    await writeUriToTag(tx, await inspectTag(tx, tag.atr), 'https://wm.example/v/AAAAAAAA?nfc');
    tag.pullAfter(3);
    expect(await codeOf(writeUriToTag(tx, await inspectTag(tx, tag.atr), URL))).toBe('tag_removed');
    expect(tag.ndefMessage()).toEqual(Buffer.alloc(0)); // length 0: empty, not half a URL
    await writeUriToTag(tx, await inspectTag(tx, tag.atr), URL);
    expect(decodeUriMessage(tag.ndefMessage()!)).toBe(URL);
  });
});
