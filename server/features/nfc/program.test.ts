import { describe, expect, it } from 'vitest';
import { ATR_ISO_DEP, ATR_MIFARE_CLASSIC_1K, VirtualTag } from '../../../test/nfc/virtual-tag.ts';
import { decodeUriMessage, encodeUriMessage } from './ndef.ts';
import { inspectTag, messages, NfcError, verifyUriOnTag, writeUriToTag, type Transmit } from './program.ts';

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

  it('reads what a tag holds at inspection: blank (no extra APDU), a URI, other data', async () => {
    const blank = new VirtualTag();
    const snap = await inspectTag(direct(blank), blank.atr);
    expect(snap.info.content).toEqual({ kind: 'blank' });
    expect(blank.stats.apdus).toBe(2);
    const written = new VirtualTag({ model: 'NTAG216' });
    written.holdNdef(encodeUriMessage(URL));
    const read = await inspectTag(direct(written), written.atr);
    expect(read.info.content).toEqual({ kind: 'uri', url: URL });
    const inspected = read.inspectApdus;
    expect(inspected).toBe(written.stats.apdus);
    const verified = await verifyUriOnTag(direct(written), read, URL);
    // The presentation's detection is reported with the first write or verify on it, once. The
    // verify reads the URL back (3 READs) and the NTAG216's configuration (1), for its password.
    expect(verified).toMatchObject({ pagesWritten: 0, inspectApdus: inspected, apdus: 4, protected: false, mirror: false });
    expect((inspected ?? 0) + verified.apdus).toBe(written.stats.apdus);
    expect(read.inspectApdus).toBe(0);
    expect(written.stats.writes).toBe(0);
    expect(await codeOf(verifyUriOnTag(direct(written), read, 'https://wm.example/v/OTHER123?nfc'))).toBe('verify_failed');
    const other = new VirtualTag();
    other.holdNdef(Buffer.from([0xd1, 0x01, 0x02, 0x54, 0x02, 0x65])); // a Text record
    expect((await inspectTag(direct(other), other.atr)).info.content).toEqual({ kind: 'other' });
  });

  it('"too small" suggests the NTAGs bigger than the one presented that hold the URL', () => {
    expect(messages.tooSmall(160, 144, 'NTAG213')).toBe('Tag too small: the URL needs 160 bytes, this NTAG213 holds 144. Use a bigger tag: NTAG215 (496 bytes) or NTAG216 (872 bytes).');
    expect(messages.tooSmall(600, 496, 'NTAG215')).toBe('Tag too small: the URL needs 600 bytes, this NTAG215 holds 496. Use a bigger tag: NTAG216 (872 bytes).');
    expect(messages.tooSmall(900, 872, 'NTAG216')).toMatch(/No NTAG holds it: use a shorter scan base\.$/);
  });

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
