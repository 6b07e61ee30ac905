import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NfcBridge } from '../../server/features/nfc/bridge.ts';
import { cardOff, errorCode, nextCard, waitForStatus } from './helpers.ts';
import { until } from './support.ts';
import { decodeUriMessage } from '../../server/features/nfc/ndef.ts';
import { nfcSkipReason, startPcscSandbox, type PcscSandbox } from './harness.ts';
import { ATR_ISO_DEP, ATR_MIFARE_CLASSIC_1K, VirtualTag } from './virtual-tag.ts';

const skip = nfcSkipReason();

describe.skipIf(skip !== null)('NFC bridge over the real PC/SC stack (pcscd + vpcd)', () => {
  let sandbox: PcscSandbox;
  let bridge: NfcBridge;
  const URL = 'https://wm.example/v/ABCD1234?nfc';

  beforeAll(async () => {
    sandbox = await startPcscSandbox();
    bridge = new NfcBridge({ env: { ...process.env, ...sandbox.env }, heartbeatTimeoutMs: 2000, restartDelayMs: 200 });
    bridge.start();
    await waitForStatus(bridge, (s) => s.state === 'ready' && s.readers.length === 2);
  });

  afterAll(async () => {
    await bridge?.stop();
    await sandbox?.close();
  });

  it('sees the virtual readers, then a tag with its UID, type and capacity', async () => {
    expect(bridge.status().readers).toEqual(['Virtual PCD 00 00', 'Virtual PCD 00 01']);
    const tag = new VirtualTag({ model: 'NTAG215' });
    const card = nextCard(bridge);
    await tag.insert(sandbox.endpoint(0));
    const c = await card;
    expect(c.info).toMatchObject({ supported: true, type: 'NTAG215', dataAreaBytes: 496 });
    expect(c.info.uid.replaceAll(':', '')).toBe(tag.uid.toString('hex').toUpperCase());
    const out = await bridge.write({ url: URL, expectUid: c.info.uid });
    expect(decodeUriMessage(tag.ndefMessage()!)).toBe(URL);
    expect(out.uid).toBe(c.info.uid);
    await tag.remove();
    await waitForStatus(bridge, (s) => s.state === 'ready');
  });

  it('refuses unsupported cards, read-only tags and writes with no tag', async () => {
    expect(await errorCode(bridge.write({ url: URL }))).toBe('no_tag');
    for (const [opts, code] of [
      [{ atr: ATR_MIFARE_CLASSIC_1K }, 'unsupported_card'],
      [{ atr: ATR_ISO_DEP }, 'unsupported_card'],
      [{ readOnly: true }, 'read_only'],
      [{ ccSize: 2 }, 'too_small'],
    ] as const) {
      const tag = new VirtualTag(opts);
      const card = nextCard(bridge);
      await tag.insert(sandbox.endpoint(0));
      await card;
      expect(await errorCode(bridge.write({ url: URL }))).toBe(code);
      expect(tag.stats.writes).toBe(0);
      await tag.remove();
    }
  });

  it('a tag pulled mid-write: tag_removed, then presenting it again succeeds', async () => {
    const tag = new VirtualTag();
    let card = nextCard(bridge);
    await tag.insert(sandbox.endpoint(0));
    await card;
    tag.pullAfter(4);
    const off = cardOff(bridge);
    expect(await errorCode(bridge.write({ url: URL }))).toBe('tag_removed');
    await off; // the reader noticed the tag is gone (pcscd polls every ~400 ms)
    expect(tag.ndefMessage()).toEqual(Buffer.alloc(0));
    card = nextCard(bridge);
    await tag.insert(sandbox.endpoint(0));
    await card;
    await bridge.write({ url: URL });
    expect(decodeUriMessage(tag.ndefMessage()!)).toBe(URL);
    await tag.remove();
  });

  it('reports no daemon when pcscd stops, and recovers when it restarts', async () => {
    const generation = bridge.status().generation;
    await sandbox.stopPcscd();
    await waitForStatus(bridge, (s) => s.state === 'no_daemon');
    expect(await errorCode(bridge.write({ url: URL }))).toBe('no_daemon');
    await sandbox.startPcscd();
    await waitForStatus(bridge, (s) => s.state === 'ready');
    expect(bridge.status().generation).toBeGreaterThan(generation);
    // A quick restart (faster than the child's 1 s probe) is noticed too: new socket inode.
    const before = bridge.status().generation;
    await sandbox.restartPcscd();
    await waitForStatus(bridge, (s) => s.state === 'ready' && s.generation > before);
    const tag = new VirtualTag();
    const card = nextCard(bridge);
    await tag.insert(sandbox.endpoint(0));
    await card;
    await bridge.write({ url: URL });
    expect(decodeUriMessage(tag.ndefMessage()!)).toBe(URL);
    await tag.remove();
  });

  it('replaces a child that stalls or crashes', async () => {
    const generation = bridge.status().generation;
    bridge.restart('test: simulated native crash');
    await waitForStatus(bridge, (s) => s.state === 'ready' && s.generation > generation);
  });
});

describe.skipIf(skip !== null)('NFC bridge with an ACR122U-named reader', () => {
  it('writes normally; LED/buzzer control failing over vpcd is logged, not fatal', async ({ skip }) => {
    const sandbox = await startPcscSandbox({ readerName: 'ACS ACR122U PICC Interface' });
    const logs: string[] = [];
    const bridge = new NfcBridge({ env: { ...process.env, ...sandbox.env }, log: (m) => logs.push(m) });
    try {
      bridge.start();
      const s = await waitForStatus(bridge, (st) => st.state === 'ready' && st.readers.length > 0);
      // Renaming the reader needs pcscd in its own mount namespace (unshare, as root).
      skip(!sandbox.namespaced, 'pcscd runs on the host here (no namespaces): its readers keep the host configuration\'s names');
      expect(s.readers[0]).toMatch(/^ACS ACR122U PICC Interface/);
      const tag = new VirtualTag();
      const card = nextCard(bridge);
      await tag.insert(sandbox.endpoint(0));
      await card;
      await bridge.write({ url: 'https://wm.example/v/ABCD1234?nfc' });
      expect(decodeUriMessage(tag.ndefMessage()!)).toBe('https://wm.example/v/ABCD1234?nfc');
      await until('the LED/buzzer failure in the log', async () => logs.some((l) => l.includes('LED/buzzer control failed')));
      await tag.remove();
    } finally {
      await bridge.stop();
      await sandbox.close();
    }
  });
});
