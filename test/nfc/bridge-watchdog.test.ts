// Bridge behaviour that needs no PC/SC packages: no daemon, nfc-pcsc missing, a stalled child.
import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { NfcBridge } from '../../server/features/nfc/bridge.ts';
import { errorCode, waitForStatus } from './helpers.ts';
import { nfcModuleSkipReason } from './harness.ts';

let bridge: NfcBridge | undefined;

/** When the bridge next hears its child's heartbeat (ms since the epoch). */
function nextHeartbeatAt(b: NfcBridge): Promise<number> {
  return new Promise((resolve) => b.once('heartbeat', () => resolve(Date.now())));
}
afterEach(async () => {
  await bridge?.stop();
  bridge = undefined;
});

describe('NFC bridge watchdog', () => {
  it.skipIf(nfcModuleSkipReason())('reports no PC/SC daemon without spinning, and refuses writes with that reason', async () => {
    bridge = new NfcBridge({ env: { ...process.env, PCSCLITE_CSOCK_NAME: '/nonexistent/pcscd.comm' }, heartbeatTimeoutMs: 4000 });
    bridge.start();
    const s = await waitForStatus(bridge, (st) => st.state === 'no_daemon');
    expect(s.message).toMatch(/pcscd/);
    expect(await errorCode(bridge.write({ url: 'https://x.example/v/A?nfc' }))).toBe('no_daemon');
    // Still the first child: it waits for the daemon, heartbeating, instead of being killed for
    // stalling. Counted in heartbeats (one per 500 ms) past twice the watchdog's timeout (4 s: a
    // loaded machine delays a beat by more than a second now and then).
    const firstBeat = await nextHeartbeatAt(bridge);
    while ((await nextHeartbeatAt(bridge)) - firstBeat < 8000) expect(bridge.status().generation).toBe(1);
    expect(bridge.status().generation).toBe(1);
  });

  it('reports NFC not set up, in plain words with a fix (the module name only in the log), and does not restart', async () => {
    const log: string[] = [];
    bridge = new NfcBridge({ env: { ...process.env, WAYMARK_NFC_PCSC_MODULE: 'nfc-pcsc-not-installed' }, restartDelayMs: 50, log: (m) => log.push(m) });
    const exited = new Promise<{ restarting: boolean }>((resolve) => bridge!.once('child.exit', resolve));
    bridge.start();
    const s = await waitForStatus(bridge, (st) => st.state === 'unavailable');
    expect(s.message).toBe('NFC is not set up on this computer: the part of Waymark that talks to card readers is missing.');
    expect(s.fix).toMatch(/^Ask whoever installed Waymark/);
    expect(`${s.message} ${s.fix}`).not.toMatch(/nfc-pcsc|node_modules|pcsclite/);
    expect(await errorCode(bridge.write({ url: 'https://x.example/v/A?nfc' }))).toBe('unavailable');
    expect(log.join('\n')).toMatch(/nfc-pcsc is not installed \(.*nfc-pcsc-not-installed/);
    // The child's exit is where a restart would be scheduled: it says none was.
    expect(await exited).toMatchObject({ restarting: false });
    expect(bridge.status()).toMatchObject({ state: 'unavailable', generation: 1 });
  });

  it('a module that does not load: plain reason and fix on screen, the raw error (node_modules path) in the log', async () => {
    const log: string[] = [];
    bridge = new NfcBridge({ env: { ...process.env, WAYMARK_NFC_PCSC_MODULE: join(import.meta.dirname, 'broken-nfc-pcsc.ts') }, log: (m) => log.push(m) });
    bridge.start();
    const s = await waitForStatus(bridge, (st) => st.state === 'unavailable');
    expect(s.message).toBe('NFC is installed on this computer but does not start.');
    expect(s.fix).toMatch(/reinstall it with NFC support/);
    expect(`${s.message} ${s.fix}`).not.toMatch(/nfc-pcsc|node_modules|pcsclite|NODE_MODULE_VERSION/);
    await expect.poll(() => log.join('\n')).toMatch(/nfc-pcsc cannot load \(.*node_modules\/@pokusew\/pcsclite.*NODE_MODULE_VERSION 115/);
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
