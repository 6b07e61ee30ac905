// A crash in the middle of personalising an NTAG 424 DNA: the server (and its bridge) is
// SIGKILLed while the tag has SDM on and keys 1 and 2 changed, key 0 still the factory key. The
// restarted server finds the tag still on the reader, reads the key versions, changes only the
// keys left, verifies, binds; the tag's taps then verify against that server's master key.
import { rmSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { decodeUriMessage } from '../../server/features/nfc/ndef.ts';
import { apiRequest, spawnServer, tempDataDir, type ServerProcess } from '../support/server.ts';
import { nfcSkipReason, startPcscSandbox, type PcscSandbox } from './harness.ts';
import { freshOrg, killWithChildren, manifest, readyBatch, until, type Api } from './support.ts';
import { VirtualNtag424 } from './virtual-ntag424.ts';

const skip = nfcSkipReason();
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';

describe.skipIf(skip !== null)('NTAG 424 DNA personalisation after a crash', () => {
  let sandbox: PcscSandbox;
  let dataDir: string;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    sandbox = await startPcscSandbox();
    dataDir = tempDataDir('waymark-nfc-424-crash-');
  });
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });
  afterAll(async () => {
    await sandbox?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('finishes the tag left halfway (keys 1-2 changed, key 0 not) and its taps verify', async () => {
    const key = freshOrg(dataDir);
    const env = { ...sandbox.env };
    server = await spawnServer(dataDir, ['--scan-base', 'https://wm.example'], env);
    let api: Api = (m, p, b) => apiRequest(server!.url, m, p, b, key);
    await until('reader ready', async () => (await api('GET', '/nfc/status')).body.data.reader.state === 'ready');
    const batch = await readyBatch(api, 'HALF', 1);
    const [row] = (await manifest(api, batch.id)).nodes;
    expect((await api('POST', '/nfc/session', { batch_id: batch.id })).status).toBe(201);

    const tag = new VirtualNtag424();
    // ChangeKey for key 2 is applied, its reply held: the server dies waiting for it.
    const held = tag.holdAt((cmd) => cmd[0] === 0x90 && cmd[1] === 0xc4 && cmd[5] === 0x02);
    await tag.insert(sandbox.endpoint(0));
    await held;
    await killWithChildren(server);
    tag.release();
    expect(tag.keyVersions).toEqual([0, 1, 1, 0, 0]);
    expect(tag.ndefFile.settings.sdm).not.toBeNull();

    server = await spawnServer(dataDir, ['--scan-base', 'https://wm.example'], env);
    api = (m, p, b) => apiRequest(server!.url, m, p, b, key);
    // Still on the reader: finished as the bridge starts (maybe before an event stream could open).
    const after = await until('HALF-001 written on restart', async () => {
      const data = (await api('GET', `/batches/${batch.id}/manifest`)).body.data;
      return data.nodes[0].hardware_id ? data : undefined;
    });
    expect(after.batch.status).toBe('deployed');
    expect(tag.keyVersions).toEqual([1, 1, 1, 1, 1]);
    const state = (await api('GET', `/nodes/${row!.slug}/tap-proof`)).body.data;
    expect(state.tags).toEqual([{ uid: tag.uid.toString('hex').toUpperCase(), kind: 'ntag424', key_version: 1, last_counter: -1 }]);

    for (let i = 0; i < 3; i++) {
      const url = new URL(decodeUriMessage(tag.tap())!);
      expect(url.pathname).toBe(`/v/${row!.slug}`);
      const res = await fetch(`${server.url}${url.pathname}${url.search}`, { redirect: 'manual', headers: { 'user-agent': IPHONE } });
      expect(res.status).toBe(302);
    }
    // Only a verified tap moves the tag's counter: all three were, up to the tag's own count.
    expect((await api('GET', `/nodes/${row!.slug}/tap-proof`)).body.data.tags[0].last_counter).toBe(tag.sdmReadCtr);
    await tag.remove();
  }, 120_000);
});
