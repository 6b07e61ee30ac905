import { describe, expect, it } from 'vitest';
import { NfcBridge } from '../server/features/nfc/bridge.ts';
import { waitForStatus } from '../test/nfc/helpers.ts';
import { chooseNfcChildRuntime, nfcChildSpawner, type UtilityProcessModule } from './nfc-child.ts';

const NODE = '/opt/node-24/bin/node';
const noElectron: UtilityProcessModule = {
  fork: () => {
    throw new Error('utilityProcess.fork called outside Electron');
  },
};

describe('which runtime runs the NFC bridge child', () => {
  it('inside Electron: a utilityProcess, in the installed app and from a checkout', () => {
    for (const packaged of [true, false]) {
      expect(chooseNfcChildRuntime({ inElectron: true, packaged, nfcNode: undefined, execPath: '/opt/Waymark/waymark' })).toEqual({
        runtime: { kind: 'utility-process' },
        problems: [],
      });
    }
  });
  it('from a checkout, settings.json nfcNode forks the child on that Node (developer override)', () => {
    expect(chooseNfcChildRuntime({ inElectron: true, packaged: false, nfcNode: NODE, execPath: '/x/electron' }).runtime).toEqual({ kind: 'node-fork', execPath: NODE });
  });
  it('the installed app ignores nfcNode and says so: a separate Node cannot read the script inside app.asar', () => {
    const r = chooseNfcChildRuntime({ inElectron: true, packaged: true, nfcNode: NODE, execPath: '/opt/Waymark/waymark' });
    expect(r.runtime).toEqual({ kind: 'utility-process' });
    expect(r.problems).toEqual([expect.stringMatching(/nfcNode .* ignores it/)]);
  });
  it('outside Electron: a fork on this Node', () => {
    expect(chooseNfcChildRuntime({ inElectron: false, packaged: false, nfcNode: NODE, execPath: process.execPath }).runtime).toEqual({
      kind: 'node-fork',
      execPath: process.execPath,
    });
  });
  it('a node-fork runtime really starts the child on the Node it names (here: this one, nfc-pcsc made missing)', async () => {
    const { runtime } = chooseNfcChildRuntime({ inElectron: true, packaged: false, nfcNode: process.execPath, execPath: '/x/electron' });
    const bridge = new NfcBridge({ spawn: nfcChildSpawner(runtime, noElectron), env: { ...process.env, WAYMARK_NFC_PCSC_MODULE: 'nfc-pcsc-not-installed' } });
    try {
      bridge.start();
      expect((await waitForStatus(bridge, (s) => s.state === 'unavailable')).generation).toBe(1);
    } finally {
      await bridge.stop();
    }
  });
  it('a utility-process runtime goes to utilityProcess.fork with the bridge script and environment', () => {
    const calls: unknown[][] = [];
    const recording: UtilityProcessModule = {
      fork: (...args) => {
        calls.push(args);
        throw new Error('recorded');
      },
    };
    const spawn = nfcChildSpawner({ kind: 'utility-process' }, recording);
    expect(() => spawn({ script: '/app/out/main/bridge-child.js', env: { A: '1' } })).toThrow('recorded');
    expect(calls).toEqual([['/app/out/main/bridge-child.js', [], { env: { A: '1' }, stdio: ['ignore', 'ignore', 'pipe'], serviceName: 'Waymark NFC bridge' }]]);
  });
});
