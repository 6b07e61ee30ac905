// The field cases of tag programming on the real stack (pcscd + vpcd + virtual tags): check mode
// (a tag placed with nothing to write is read and shown), the APDUs a tag costs as reported by
// tag.written and counted by the tag itself, and "tag too small" suggesting a bigger tag.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../server/serve.ts';
import { nfcSkipReason, type PcscSandbox } from './harness.ts';
import { expectedNdefUri, manifest, type NfcTestServer, openEvents, readyBatch, startNfcTestServer, until, type Api } from './support.ts';
import { VirtualTag } from './virtual-tag.ts';

const skip = nfcSkipReason();

function uidOf(tag: VirtualTag): string {
  return [...tag.uid].map((b) => b.toString(16).toUpperCase().padStart(2, '0')).join(':');
}

describe.skipIf(skip !== null)('NFC in the field (pcscd + vpcd + virtual tags)', () => {
  let nfc: NfcTestServer;
  let sandbox: PcscSandbox;
  let server: RunningServer;
  let apiKey: string;
  let api: Api;
  let base: string;

  beforeAll(async () => {
    nfc = await startNfcTestServer('waymark-nfc-field-');
    ({ sandbox, server, apiKey, api } = nfc);
    base = server.url;
  });

  afterAll(async () => {
    await nfc?.close();
  });

  async function lift(tag: VirtualTag): Promise<void> {
    await tag.remove();
    await until('card gone', async () => (await api('GET', '/nfc/status')).body.data.reader.cards.length === 0);
  }

  it('check mode: a tag placed with no session or pending write is read and shown (node, blank, another URL)', async () => {
    const batch = await readyBatch(api, 'CHK', 2);
    const [row] = (await manifest(api, batch.id)).nodes;
    const stream = openEvents(base, apiKey);
    await stream.ready;

    const blank = new VirtualTag({ model: 'NTAG215' });
    await blank.insert(sandbox.endpoint(0));
    const readBlank = await stream.next((e) => e.type === 'tag.read');
    expect(readBlank.data).toMatchObject({ uid: uidOf(blank), content: 'blank', type: 'NTAG215', node: null, bound_to: null, url: null, warning: null });
    expect(readBlank.data.message).toMatch(/^Blank NTAG215/);
    expect(blank.stats.writes).toBe(0); // read, never written
    expect((await api('GET', '/nfc/tag')).body.data).toEqual(readBlank.data);
    // Written from the node page: the reading follows (the tag now holds the node and is bound to it).
    const written = await api('POST', '/nfc/write', { slug: row!.slug });
    expect(written.status).toBe(200);
    const after = await stream.next((e) => e.type === 'tag.read');
    expect(after.data).toMatchObject({ content: 'node', node: { slug: row!.slug, serial: 'CHK-001', status: 'active', hardware_id: uidOf(blank) }, warning: null });
    await lift(blank);

    // Presented again later: recognised as CHK-001's tag, with its label and status.
    await blank.insert(sandbox.endpoint(0));
    const again = await stream.next((e) => e.type === 'tag.read');
    expect(again.data).toMatchObject({
      content: 'node',
      url: `${row!.url}?nfc`,
      node: { serial: 'CHK-001', label: expect.any(String), status: 'active' },
      bound_to: { slug: row!.slug },
      warning: null,
    });
    expect(again.data.message).toContain('CHK-001');
    expect(blank.stats.writes).toBe(9); // only the one write
    await lift(blank);

    const other = new VirtualTag();
    other.holdNdef(expectedNdefUri('https://elsewhere.example/menu'));
    await other.insert(sandbox.endpoint(0));
    const readOther = await stream.next((e) => e.type === 'tag.read');
    expect(readOther.data).toMatchObject({ content: 'other_url', url: 'https://elsewhere.example/menu', node: null });
    expect(readOther.data.message).toMatch(/^Another URL: https:\/\/elsewhere\.example\/menu/);
    expect(other.stats.writes).toBe(0);
    await lift(other);
    stream.close();
  });

  it('tag.written reports the APDUs the tag counted: 14 for a typical URL on a new tag, as docs/nfc.md says', async () => {
    const batch = await readyBatch(api, 'APDU', 1);
    const [row] = (await manifest(api, batch.id)).nodes;
    expect(`${row!.url}?nfc`).toMatch(/^https:\/\/wm\.example\/v\/[0-9A-Z]{8}\?nfc$/); // the docs' example shape
    const stream = openEvents(base, apiKey);
    await stream.ready;
    const tag = new VirtualTag({ model: 'NTAG213' });
    await tag.insert(sandbox.endpoint(0));
    await stream.next((e) => e.type === 'tag.read');
    const r = await api('POST', '/nfc/write', { slug: row!.slug });
    expect(r.status).toBe(200);
    const e = await stream.next((ev) => ev.type === 'tag.written');
    // Counted by the tag: GET UID + 1 read to detect, 9 page writes, 3 verify reads.
    expect({ tag: tag.stats.apdus, reads: tag.stats.reads, writes: tag.stats.writes }).toEqual({ tag: 14, reads: 4, writes: 9 });
    expect(e.data.apdus).toBe(tag.stats.apdus);
    expect(r.body.data.apdus).toBe(14);
    expect(r.body.data.recognised).toBe(false);
    await lift(tag);
    stream.close();
  });

  it("writes the organization's own scan domain once it sets one (PATCH /organization), byte for byte", async () => {
    const set = await api('PATCH', '/organization', { scan_base: 'https://tags.example.org' });
    expect(set.status).toBe(200);
    try {
      const batch = await readyBatch(api, 'DOM', 1);
      const [row] = (await manifest(api, batch.id)).nodes;
      expect(row!.url).toBe(`https://tags.example.org/v/${row!.slug}`);
      const stream = openEvents(base, apiKey);
      await stream.ready;
      const tag = new VirtualTag({ model: 'NTAG215' });
      await tag.insert(sandbox.endpoint(0));
      await stream.next((e) => e.type === 'tag.read');
      const r = await api('POST', '/nfc/write', { slug: row!.slug });
      expect(r.status).toBe(200);
      await stream.next((ev) => ev.type === 'tag.written');
      expect(tag.ndefMessage()).toEqual(expectedNdefUri(`https://tags.example.org/v/${row!.slug}?nfc`));
      await lift(tag);
      stream.close();
    } finally {
      expect((await api('PATCH', '/organization', { scan_base: null })).status).toBe(200);
    }
  });

  it('"Tag too small" names bigger tags than the one presented', async () => {
    const batch = await readyBatch(api, 'SMALL', 1);
    const [row] = (await manifest(api, batch.id)).nodes;
    const tiny = new VirtualTag({ model: 'ULTRALIGHT', ccSize: 2 });
    await tiny.insert(sandbox.endpoint(0));
    await until('card seen', async () => (await api('GET', '/nfc/status')).body.data.reader.cards.length === 1);
    const r = await api('POST', '/nfc/write', { slug: row!.slug });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatch(/^Tag too small: the URL needs \d+ bytes, this tag holds 16\. Use a bigger tag: NTAG213 \(144 bytes\) or NTAG215 \(496 bytes\) or NTAG216 \(872 bytes\)\.$/);
    expect(tiny.stats.writes).toBe(0);
    await lift(tiny);
  });
});
