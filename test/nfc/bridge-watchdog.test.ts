// Bridge behaviour that needs no PC/SC packages: no daemon, nfc-pcsc missing, a stalled child.
import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { NfcBridge } from '../../server/features/nfc/bridge.ts';
import { createRequire } from 'node:module';
import { errorCode, waitForStatus } from './helpers.ts';

function nfcPcscLoads(): boolean {
  try {
    createRequire(import.meta.url)('@pokusew/pcsclite');
    return true;
  } catch {
    return false;
  }
}

let bridge: NfcBridge | undefined;
afterEach(async () => {
  await bridge?.stop();
  bridge = undefined;
});

describe('NFC bridge watchdog', () => {
  it.skipIf(!nfcPcscLoads())('reports no PC/SC daemon without spinning, and refuses writes with that reason', async () => {
    bridge = new NfcBridge({ env: { ...process.env, PCSCLITE_CSOCK_NAME: '/nonexistent/pcscd.comm' } });
    bridge.start();
    const s = await waitForStatus(bridge, (st) => st.state === 'no_daemon');
    expect(s.message).toMatch(/pcscd/);
    expect(await errorCode(bridge.write({ url: 'https://x.example/v/A?nfc' }))).toBe('no_daemon');
    // Still the first child: it waits for the daemon instead of being killed for stalling.
    await new Promise((r) => setTimeout(r, 1500));
    expect(bridge.status().generation).toBe(1);
  });

  it('reports "NFC unavailable: nfc-pcsc not installed" and does not restart', async () => {
    bridge = new NfcBridge({ env: { ...process.env, WAYMARK_NFC_PCSC_MODULE: 'nfc-pcsc-not-installed' }, restartDelayMs: 50 });
    bridge.start();
    const s = await waitForStatus(bridge, (st) => st.state === 'unavailable');
    expect(s.message).toMatch(/^NFC unavailable: nfc-pcsc not installed/);
    expect(await errorCode(bridge.write({ url: 'https://x.example/v/A?nfc' }))).toBe('unavailable');
    await new Promise((r) => setTimeout(r, 300));
    expect(bridge.status()).toMatchObject({ state: 'unavailable', generation: 1 });
  });

  it('kills a child whose event loop is stuck and starts a new one; a write never hangs', async () => {
    bridge = new NfcBridge({ script: join(import.meta.dirname, 'stall-child.ts'), heartbeatTimeoutMs: 800, writeTimeoutMs: 1500, restartDelayMs: 50 });
    bridge.start();
    await waitForStatus(bridge, (st) => st.state === 'ready');
    const code = await errorCode(bridge.write({ url: 'https://x.example/v/A?nfc' }));
    expect(['io_error', 'tag_removed']).toContain(code);
    await waitForStatus(bridge, (st) => st.generation >= 2);
  });
});
