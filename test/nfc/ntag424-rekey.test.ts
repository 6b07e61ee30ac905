// NTAG 424 DNA single writes and re-keying on the real stack (pcscd + vpcd + the virtual 424 DNA):
// a factory-new tag written with POST /nfc/write (personalised, bound, its next tap verified);
// then `waymark tap-keys rotate`: the tag keeps verifying with its recorded version until it is
// written again, which re-keys it to the new version (keys changed from the old diversified keys,
// tap_proof_tags moved, taps verified with the new keys); a re-key interrupted with keys partly
// changed resumes on the next presentation.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeUriMessage } from '../../server/features/nfc/ndef.ts';
import { ntag424KeySet } from '../../server/features/nfc/ntag424/index.ts';
import { NTAG424_KIND } from '../../server/features/tapproofs/index.ts';
import type { RunningServer } from '../../server/serve.ts';
import { rows } from '../support/rows.ts';
import { repoRoot } from '../support/server.ts';
import { nfcSkipReason, type PcscSandbox } from './harness.ts';
import { manifest, type NfcTestServer, readyBatch, startNfcTestServer, until, type Api } from './support.ts';
import { VirtualNtag424 } from './virtual-ntag424.ts';

const skip = nfcSkipReason();
const MASTER_V1 = Buffer.from('8c1f3a5e7b9d0f2468ace13579bdf024', 'hex');
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
const isChangeKey = (keyNo: number) => (cmd: Buffer) => cmd[0] === 0x90 && cmd[1] === 0xc4 && cmd[5] === keyNo;

describe.skipIf(skip !== null)('NTAG 424 DNA: single write and re-keying after a master key rotation', () => {
  let nfc: NfcTestServer;
  let sandbox: PcscSandbox;
  let server: RunningServer;
  let orgId: string;
  let api: Api;

  beforeAll(async () => {
    nfc = await startNfcTestServer('waymark-nfc-424-rekey-');
    ({ sandbox, server, orgId, api } = nfc);
    server.app.services.tapProofKeys.import(NTAG424_KIND, orgId, 1, MASTER_V1);
  });

  afterAll(async () => {
    await nfc?.close();
  });

  const scan = async (url: string) => {
    const u = new URL(url);
    const res = await fetch(`${server.url}${u.pathname}${u.search}`, { redirect: 'manual', headers: { 'user-agent': IPHONE } });
    expect(res.status).toBe(302);
  };
  const sources = async (nodeId: string) =>
    (await rows<{ source: string }>(server.store, 'SELECT source FROM scan_events WHERE node_id = ? ORDER BY id', nodeId)).map((r) => r.source);
  const tapProofTags = async (slug: string) => (await api('GET', `/nodes/${slug}/tap-proof`)).body.data.tags;
  const place = async (tag: VirtualNtag424) => {
    await tag.insert(sandbox.endpoint(0));
    await until('tag inspected', async () => (await api('GET', '/nfc/tag')).body.data?.uid === uidOf(tag));
  };
  const lift = async (tag: VirtualNtag424) => {
    await tag.remove();
    await until('card gone', async () => (await api('GET', '/nfc/status')).body.data.reader.cards.length === 0);
  };

  it('writes a factory-new tag with POST /nfc/write, then re-keys it (and a second one, interrupted) after tap-keys rotate', async () => {
    const batch = await readyBatch(api, 'RKY', 2);
    const nodes = (await manifest(api, batch.id)).nodes;

    // A single write of a factory-new tag: personalised with v1, bound, its next tap verified.
    const tag = new VirtualNtag424();
    await place(tag);
    const first = await api('POST', '/nfc/write', { slug: nodes[0]!.slug });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.data).toMatchObject({ slug: nodes[0]!.slug, hardware_id: uidOf(tag), protection: 'ntag424_sun', key_version: 1, recognised: false, apdus: 17 });
    expect(tag.keys).toEqual(ntag424KeySet(MASTER_V1, tag.uid).keys);
    expect((await api('GET', `/nodes/${nodes[0]!.slug}`)).body.data).toMatchObject({ hardware_id: uidOf(tag), status: 'active' });
    // Check mode after the write: its verify read's mirror checked with version 1.
    expect((await api('GET', '/nfc/tag')).body.data.protection).toMatchObject({ kind: 'ntag424_sun', mirror: true, verifies: true, key_version: 1, rekey_due: false });
    await lift(tag);
    const tappedWithV1 = decodeUriMessage(tag.tap())!;
    await scan(tappedWithV1);
    expect(await sources(nodes[0]!.id)).toEqual(['nfc_verified']);

    // A second tag personalised with v1 too (for the interrupted re-key below).
    const second = new VirtualNtag424();
    await place(second);
    expect((await api('POST', '/nfc/write', { slug: nodes[1]!.slug })).body.data).toMatchObject({ key_version: 1 });
    await lift(second);

    // Rotation with the CLI, on the server's own key file.
    // Not execFileSync: the in-process server (and its bridge watchdog) must keep running meanwhile.
    const { stdout: out } = await promisify(execFile)(process.execPath, [join(repoRoot, 'server', 'cli.ts'), 'tap-keys', 'rotate', '--org', orgId, '--data', nfc.dataDir], { encoding: 'utf8' });
    expect(out).toMatch(/Master key version 2 is now current/);
    const v2 = server.app.services.tapProofKeys.current(NTAG424_KIND, orgId);
    expect(v2.version).toBe(2);

    // Not yet re-keyed: its taps keep verifying with its recorded version 1.
    await scan(decodeUriMessage(tag.tap())!);
    expect(await sources(nodes[0]!.id)).toEqual(['nfc_verified', 'nfc_verified']);
    expect(await tapProofTags(nodes[0]!.slug)).toMatchObject([{ key_version: 1 }]);

    // Written again: re-keyed from v1's keys to v2's, the binding moved to version 2. Check mode first says it is due.
    const before = tag.stats.apdus;
    await place(tag);
    const checked = (await api('GET', '/nfc/tag')).body.data.protection;
    expect(checked).toMatchObject({ kind: 'ntag424_sun', mirror: true, verifies: true, key_version: 1, rekey_due: true, counter: expect.any(Number) });
    expect(checked.message).toMatch(/master key version 1 .*Version 2 is current: writing it again re-keys it/);
    const rekeyed = await api('POST', '/nfc/write', { slug: nodes[0]!.slug });
    expect(rekeyed.status, JSON.stringify(rekeyed.body)).toBe(200);
    // 6 to detect (SDM on: GetKeyVersion of key 0 too), 2 authentication (v1's key 0), 4 GetKeyVersion, 5 ChangeKey, 2 to verify.
    expect(rekeyed.body.data).toMatchObject({ key_version: 2, recognised: false, apdus: 19 });
    expect(tag.stats.apdus - before).toBe(19);
    expect(tag.keys).toEqual(ntag424KeySet(v2.key, tag.uid).keys);
    expect(tag.keyVersions).toEqual([2, 2, 2, 2, 2]);
    await lift(tag);
    expect(await tapProofTags(nodes[0]!.slug)).toMatchObject([{ key_version: 2 }]);
    await scan(decodeUriMessage(tag.tap())!);
    // A URL the tag MACed with its v1 keys is refused now.
    await scan(tappedWithV1);
    expect((await sources(nodes[0]!.id)).slice(2)).toEqual(['nfc_verified', 'nfc_unverified']);

    // Check mode on a tag keyed from another master key with this node's URL: it does not verify.
    const strangerUid = Buffer.from('04C0FFEE123456', 'hex');
    const stranger = new VirtualNtag424({ uid: strangerUid, keys: ntag424KeySet(Buffer.alloc(16, 7), strangerUid).keys });
    stranger.ndefFile.data.set(tag.ndefFile.data);
    stranger.ndefFile.settings = { ...tag.ndefFile.settings };
    stranger.keyVersions.fill(1);
    await place(stranger);
    const foreign = (await api('GET', '/nfc/tag')).body.data.protection;
    expect(foreign).toMatchObject({ kind: 'ntag424_sun', mirror: true, verifies: false, key_version: 1 });
    expect(foreign.message).toMatch(/do not verify with this organization’s keys/);
    await lift(stranger);

    // Interrupted: pulled instead of changing key 3, so keys 1 and 2 are v2's, 3, 4 and 0 still v1's.
    second.pullAt(isChangeKey(3));
    await place(second);
    const pulled = await api('POST', '/nfc/write', { slug: nodes[1]!.slug });
    expect(pulled.status).toBe(409);
    expect(pulled.body.error).toMatch(/removed|present it again/i);
    await until('card gone', async () => (await api('GET', '/nfc/status')).body.data.reader.cards.length === 0);
    expect(second.keyVersions).toEqual([1, 2, 2, 1, 1]);
    // Presented again: GetKeyVersion says which keys are done; only 3, 4 and 0 are changed.
    await place(second);
    const resumed = await api('POST', '/nfc/write', { slug: nodes[1]!.slug });
    expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
    expect(resumed.body.data).toMatchObject({ key_version: 2, apdus: 6 + 2 + 4 + 3 + 2 });
    expect(second.keys).toEqual(ntag424KeySet(v2.key, second.uid).keys);
    await lift(second);
    expect(await tapProofTags(nodes[1]!.slug)).toMatchObject([{ key_version: 2 }]);
    await scan(decodeUriMessage(second.tap())!);
    expect(await sources(nodes[1]!.id)).toEqual(['nfc_verified']);
  }, 120_000);
});

function uidOf(tag: VirtualNtag424): string {
  return [...tag.uid].map((b) => b.toString(16).toUpperCase().padStart(2, '0')).join(':');
}
