// The bridge through the desktop app's wiring (main/nfc-child.ts: the runtime chosen inside
// Electron, its utilityProcess spawner) over the real PC/SC stack. Electron's utilityProcess is
// played by utility-process-stand-in.ts: bridge-child.ts talks over process.parentPort as it does
// in the app. What it cannot show: Electron's own process model and the Electron-built module.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseNfcChildRuntime, nfcChildSpawner } from '../../main/nfc-child.ts';
import { NfcBridge } from '../../server/features/nfc/bridge.ts';
import { decodeUriMessage } from '../../server/features/nfc/ndef.ts';
import { nfcSkipReason, startPcscSandbox, type PcscSandbox } from './harness.ts';
import { errorCode, nextCard, waitForStatus } from './helpers.ts';
import { utilityProcessStandIn } from './utility-process-stand-in.ts';
import { VirtualTag } from './virtual-tag.ts';

const skip = nfcSkipReason();

describe.skipIf(skip !== null)('NFC bridge as the desktop app starts it (utilityProcess wiring, real PC/SC)', () => {
  let sandbox: PcscSandbox;
  let bridge: NfcBridge;

  beforeAll(async () => {
    sandbox = await startPcscSandbox();
    const { runtime } = chooseNfcChildRuntime({ inElectron: true, packaged: true, nfcNode: undefined, execPath: '/opt/Waymark/waymark' });
    expect(runtime.kind).toBe('utility-process');
    bridge = new NfcBridge({ spawn: nfcChildSpawner(runtime, utilityProcessStandIn), env: { ...process.env, ...sandbox.env }, restartDelayMs: 200 });
    bridge.start();
    await waitForStatus(bridge, (s) => s.state === 'ready' && s.readers.length === 2);
  });

  afterAll(async () => {
    await bridge?.stop();
    await sandbox?.close();
  });

  it('sees the readers, writes a tag, and is replaced by the watchdog after a kill', async () => {
    const url = 'https://wm.example/v/UTIL0001?nfc';
    const tag = new VirtualTag({ model: 'NTAG213' });
    const card = nextCard(bridge);
    await tag.insert(sandbox.endpoint(0));
    const c = await card;
    await bridge.write({ url, expectUid: c.info.uid });
    expect(decodeUriMessage(tag.ndefMessage()!)).toBe(url);
    await tag.remove();
    await waitForStatus(bridge, (s) => s.state === 'ready');

    bridge.restart('test');
    await waitForStatus(bridge, (s) => s.generation === 2 && s.state === 'ready');
    expect(await errorCode(bridge.write({ url }))).toBe('no_tag');
  });
});
