import { describe, expect, it } from 'vitest';
import { VirtualTag } from '../../../test/nfc/virtual-tag.ts';
import { decodeUriMessage } from './ndef.ts';
import { MIRROR_PLACEHOLDER, mirrorUrl, parseMirror, unmirrored } from './ntag21x.ts';
import { formatUid, inspectTag, NfcError, readCounter, verifyUriOnTag, writeUriToTag, type Transmit } from './program.ts';

/** The virtual tag answered in-process (no PC/SC): for the pure logic. */
function direct(tag: VirtualTag): Transmit {
  return async (apdu) => {
    const r = tag.apdu(apdu);
    if (!r) throw new Error('tag gone');
    return r;
  };
}

const MIRROR_URL = mirrorUrl('https://wm.example/v/ABCD1234?nfc');
const OURS = { pwd: '1a2b3c4d', pack: '5e6f' };
const THEIRS = { pwd: 'deadbeef', pack: '0102' };

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    return err instanceof NfcError ? err.code : String(err);
  }
}

/** A new presentation to a PC/SC reader: power-on, inspection (the first READ). */
async function present(tag: VirtualTag) {
  tag.powerOn();
  return inspectTag(direct(tag), tag.atr);
}

/** What a phone gets from a tap: the URL with the mirror. */
function tapUrl(tag: VirtualTag): string {
  return decodeUriMessage(tag.phoneTap()!)!;
}

describe('NTAG21x UID + counter mirror', () => {
  it('mirrors UIDxCOUNTER over the placeholder, and the counter advances once per tap', async () => {
    const tag = new VirtualTag({ model: 'NTAG215' });
    const out = await writeUriToTag(direct(tag), await present(tag), MIRROR_URL, { mirror: true });
    expect(out).toMatchObject({ mirror: true, protected: false });
    // Physical memory keeps the placeholder; reads show the mirror.
    expect(decodeUriMessage(tag.ndefMessage()!)).toBe(MIRROR_URL);
    const uidHex = tag.uid.toString('hex').toUpperCase();
    const counters: number[] = [];
    for (let i = 0; i < 5; i++) {
      const url = tapUrl(tag);
      expect(unmirrored(url)).toBe(MIRROR_URL);
      const m = parseMirror(new URL(url).searchParams.get('m')!)!;
      expect(m.uid).toBe(formatUid(tag.uid));
      expect(url).toContain(`m=${uidHex}x`);
      counters.push(m.counter);
    }
    expect(counters).toEqual([1, 2, 3, 4, 5]);
    expect(await readCounter(direct(tag))).toBe(5);
    // A PC/SC presentation is a tap too: its first READ advances the counter.
    await present(tag);
    expect(await readCounter(direct(tag))).toBe(6);
  });

  it('rewriting a mirrored tag without the mirror turns it off (the new URL reads back clean)', async () => {
    const tag = new VirtualTag();
    await writeUriToTag(direct(tag), await present(tag), MIRROR_URL, { mirror: true });
    const plain = 'https://wm.example/v/ZZZZ9999?nfc&q=' + 'a'.repeat(20);
    const out = await writeUriToTag(direct(tag), await present(tag), plain, {});
    expect(out.mirror).toBe(false);
    expect(tapUrl(tag)).toBe(plain);
  });

  it('refuses the mirror on a tag without it (Ultralight)', async () => {
    const tag = new VirtualTag({ model: 'ULTRALIGHT' });
    expect(await codeOf(writeUriToTag(direct(tag), await present(tag), MIRROR_URL, { mirror: true }))).toBe('unsupported_card');
  });

  it('parses only a mirrored value', () => {
    expect(parseMirror(MIRROR_PLACEHOLDER)).toBeNull();
    expect(parseMirror('04A22B1E7C5D80x00002A')).toEqual({ uid: '04:A2:2B:1E:7C:5D:80', counter: 42 });
    expect(parseMirror('04a22b1e7c5d80x00002a')).toBeNull();
  });
});

describe('NTAG21x password', () => {
  it('protects a tag: writes without the password are refused, with it they work', async () => {
    const tag = new VirtualTag();
    const out = await writeUriToTag(direct(tag), await present(tag), MIRROR_URL, { mirror: true, protect: true, password: OURS });
    expect(out.protected).toBe(true);
    // Someone in the field, without the password: the tag refuses the write.
    tag.powerOn();
    expect(tag.apdu(Buffer.from('FFD600040403000000', 'hex'))!.toString('hex')).toBe('6300');
    // Our rewrite: PWD_AUTH first (told the tag is configured), then the write.
    const again = await writeUriToTag(direct(tag), await present(tag), mirrorUrl('https://wm.example/v/NEW00001?nfc'), { mirror: true, protect: true, password: OURS, configured: true });
    expect(again.protected).toBe(true);
    expect(unmirrored(tapUrl(tag))).toBe(mirrorUrl('https://wm.example/v/NEW00001?nfc'));
    // Not told: the refused first write leads to the configuration, then PWD_AUTH.
    const plain = await writeUriToTag(direct(tag), await present(tag), 'https://wm.example/v/PLAIN001?nfc', { password: OURS });
    expect(plain).toMatchObject({ protected: false, mirror: false });
    expect(tapUrl(tag)).toBe('https://wm.example/v/PLAIN001?nfc');
    expect(tag.failedAuths).toEqual([]);
  });

  it('a tag recognised after a crash (its URL already there) reports the password and mirror it has, writing nothing', async () => {
    const url = 'https://wm.example/v/CRASH001?nfc';
    const tag = new VirtualTag();
    await writeUriToTag(direct(tag), await present(tag), url, { protect: true, password: OURS });
    const writes = tag.stats.writes;
    expect(await verifyUriOnTag(direct(tag), await present(tag), url)).toMatchObject({ protected: true, mirror: false, pagesWritten: 0 });
    const plain = new VirtualTag();
    await writeUriToTag(direct(plain), await present(plain), url, {});
    expect(await verifyUriOnTag(direct(plain), await present(plain), url)).toMatchObject({ protected: false, mirror: false });
    expect(tag.stats.writes).toBe(writes);
  });

  it('refuses a tag protected with another password, explaining why, and writes nothing', async () => {
    const tag = new VirtualTag();
    await writeUriToTag(direct(tag), await present(tag), MIRROR_URL, { protect: true, mirror: true, password: THEIRS });
    const before = Buffer.from(tag.memory);
    const writes = tag.stats.writes;
    for (const options of [{ protect: true, password: OURS }, { password: OURS }, {}]) {
      const snap = await present(tag);
      const err = await writeUriToTag(direct(tag), snap, 'https://wm.example/v/MINE0001?nfc', options).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(NfcError);
      expect((err as NfcError).code).toBe('password_protected');
      expect((err as NfcError).message).toMatch(/password-protected by someone else/);
    }
    expect(tag.stats.writes).toBe(writes);
    expect(tag.memory.equals(before)).toBe(true);
  });
});
