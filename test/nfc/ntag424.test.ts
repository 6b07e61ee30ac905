// NTAG 424 DNA end to end on the real stack (pcscd + vpcd + the virtual 424 DNA, whose crypto is
// its own): a batch session personalises the tags through the bridge (per-tag keys from the
// organization master key, SDM on, verified), then a phone taps one N times and each URL is
// scanned against the server: N verified, a replayed URL, a tampered CMAC and a tag keyed from
// another master key refused. Refusals (a tag keyed by someone else) and a tag pulled halfway
// through the personalisation (finished when presented again) on the way.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeUriMessage } from '../../server/features/nfc/ndef.ts';
import { ntag424KeySet } from '../../server/features/nfc/ntag424/index.ts';
import { NTAG424_KIND } from '../../server/features/tapproofs/index.ts';
import type { RunningServer } from '../../server/serve.ts';
import { rows } from '../support/rows.ts';
import { nfcSkipReason, type PcscSandbox } from './harness.ts';
import { manifest, type NfcTestServer, openEvents, readyBatch, startNfcTestServer, until, type Api } from './support.ts';
import { VirtualNtag424 } from './virtual-ntag424.ts';

const skip = nfcSkipReason();
const MASTER = Buffer.from('8c1f3a5e7b9d0f2468ace13579bdf024', 'hex');
const OTHER_MASTER = Buffer.from('00112233445566778899aabbccddeeff', 'hex');
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';

function uidOf(tag: VirtualNtag424): string {
  return [...tag.uid].map((b) => b.toString(16).toUpperCase().padStart(2, '0')).join(':');
}

describe.skipIf(skip !== null)('NTAG 424 DNA through the bridge (pcscd + vpcd + virtual 424 DNA)', () => {
  let nfc: NfcTestServer;
  let sandbox: PcscSandbox;
  let server: RunningServer;
  let apiKey: string;
  let orgId: string;
  let api: Api;

  beforeAll(async () => {
    nfc = await startNfcTestServer('waymark-nfc-424-');
    ({ sandbox, server, apiKey, orgId, api } = nfc);
    server.app.services.tapProofKeys.import(NTAG424_KIND, orgId, 1, MASTER);
  });

  afterAll(async () => {
    await nfc?.close();
  });

  const scan = (url: string) => {
    const u = new URL(url);
    return fetch(`${server.url}${u.pathname}${u.search}`, { redirect: 'manual', headers: { 'user-agent': IPHONE } });
  };
  const sources = async (nodeId: string) =>
    (await rows<{ source: string }>(server.store, 'SELECT source FROM scan_events WHERE node_id = ? ORDER BY id', nodeId)).map((r) => r.source);

  it('a session personalises 424 DNA tags (keyed by someone else: refused, said why); each tap verifies, a replay, a tampered CMAC and another master key do not', async () => {
    const batch = await readyBatch(api, 'DNA', 2);
    const nodes = (await manifest(api, batch.id)).nodes;
    expect((await api('POST', '/nfc/session', { batch_id: batch.id })).status).toBe(201);
    const stream = openEvents(server.url, apiKey);
    await stream.ready;

    // A tag whose keys someone else changed: refused, nothing of ours left on it but the URL.
    const foreign = new VirtualNtag424({ keys: [1, 2, 3, 4, 5].map((n) => Buffer.alloc(16, n)) });
    await foreign.insert(sandbox.endpoint(0));
    const refused = await stream.next((e) => e.type === 'tag.refused' || e.type === 'tag.written');
    expect(refused.type).toBe('tag.refused');
    expect(refused.data).toMatchObject({ code: 'wrong_key', serial: 'DNA-001', uid: uidOf(foreign) });
    expect(refused.data.message).toMatch(/not factory-new/);
    expect((await api('GET', '/nfc/session')).body.data.next.serial).toBe('DNA-001');
    let off = stream.next((e) => e.type === 'tag.off');
    await foreign.remove();
    await off;

    // A factory-new tag: personalised for DNA-001.
    const tag = new VirtualNtag424();
    await tag.insert(sandbox.endpoint(0));
    const written = await stream.next((e) => e.type === 'tag.written' || e.type === 'tag.refused');
    expect(written.type, JSON.stringify(written.data)).toBe('tag.written');
    expect(written.data).toMatchObject({ serial: 'DNA-001', hardware_id: uidOf(tag), tag_type: 'NTAG 424 DNA', protection: 'ntag424_sun', key_version: 1, recognised: false });
    // Counted by the tag: 5 to detect, 2 NDEF writes, 2 authentication, ChangeFileSettings, 5 ChangeKey, 2 to verify.
    expect(written.data.apdus).toBe(17);
    expect(tag.stats.apdus).toBe(17);
    expect(tag.keys).toEqual(ntag424KeySet(MASTER, tag.uid).keys);
    expect(decodeUriMessage(tag.storedNdef())).toBe(`${nodes[0]!.url}?picc=${'0'.repeat(32)}&cmac=${'0'.repeat(16)}`);
    off = stream.next((e) => e.type === 'tag.off');
    await tag.remove();
    await off;
    const state = (await api('GET', `/nodes/${nodes[0]!.slug}/tap-proof`)).body.data;
    expect(state.tags).toEqual([{ uid: tag.uid.toString('hex').toUpperCase(), kind: 'ntag424', key_version: 1, last_counter: -1 }]);

    // A phone taps it N times: each URL verifies.
    const taps = Array.from({ length: 5 }, () => decodeUriMessage(tag.tap())!);
    expect(new Set(taps).size).toBe(5);
    for (const url of taps) expect((await scan(url)).status).toBe(302);
    expect(await sources(nodes[0]!.id)).toEqual(Array(5).fill('nfc_verified'));

    // Replayed, tampered, and a tag keyed from another master key holding this node's URL.
    expect((await scan(taps[2]!)).status).toBe(302);
    const next = decodeUriMessage(tag.tap())!;
    const tampered = next.replace(/cmac=([0-9A-F])/, (_m, c: string) => `cmac=${c === '0' ? '1' : '0'}`);
    expect((await scan(tampered)).status).toBe(302);
    const strangerUid = Buffer.from('04C0FFEE123456', 'hex');
    const stranger = new VirtualNtag424({ uid: strangerUid, keys: ntag424KeySet(OTHER_MASTER, strangerUid).keys });
    stranger.ndefFile.data.set(tag.ndefFile.data);
    stranger.ndefFile.settings = { ...tag.ndefFile.settings };
    expect((await scan(decodeUriMessage(stranger.tap())!)).status).toBe(302);
    expect((await sources(nodes[0]!.id)).slice(5)).toEqual(['nfc_unverified', 'nfc_unverified', 'nfc_unverified']);
    // The refused ones did not move the counter: the genuine URL of that tap still verifies.
    expect((await scan(next)).status).toBe(302);
    expect((await sources(nodes[0]!.id)).at(-1)).toBe('nfc_verified');

    // DNA-002's tag is pulled off the reader before its key 0 was changed; presented again it is finished.
    const second = new VirtualNtag424();
    second.pullAt((cmd) => cmd[0] === 0x90 && cmd[1] === 0xc4 && cmd[5] === 0x00);
    await second.insert(sandbox.endpoint(0));
    const pulled = await stream.next((e) => e.type === 'tag.refused' || e.type === 'tag.written');
    expect(pulled.data).toMatchObject({ code: 'tag_removed', serial: 'DNA-002' });
    await until('card gone', async () => (await api('GET', '/nfc/status')).body.data.reader.cards.length === 0);
    expect(second.keyVersions).toEqual([0, 1, 1, 1, 1]);
    await second.insert(sandbox.endpoint(0));
    const finished = await stream.next((e) => e.type === 'tag.refused' || e.type === 'tag.written');
    expect(finished.type, JSON.stringify(finished.data)).toBe('tag.written');
    expect(finished.data).toMatchObject({ serial: 'DNA-002', protection: 'ntag424_sun' });
    expect(second.keys).toEqual(ntag424KeySet(MASTER, second.uid).keys);
    expect((await scan(decodeUriMessage(second.tap())!)).status).toBe(302);
    expect(await sources(nodes[1]!.id)).toEqual(['nfc_verified']);
    const m = await manifest(api, batch.id);
    expect(m.batch.status).toBe('deployed');
    expect(m.nodes.map((n) => (n as unknown as { tag_protection: string }).tag_protection)).toEqual(['ntag424_sun', 'ntag424_sun']);
    off = stream.next((e) => e.type === 'tag.off');
    await second.remove();
    await off;
    stream.close();
  });
});
