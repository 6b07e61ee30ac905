// Which runtime the desktop app's NFC bridge child runs on, and the spawner for it. Inside
// Electron the child is a utilityProcess: it runs Electron's own Node, so the installed app needs
// nothing else (the PC/SC module is rebuilt for Electron when the app is packaged), and it works
// with the RunAsNode fuse off (a child_process.fork of Electron's binary would need RunAsNode).
// settings.json `nfcNode` stays as a developer override for `electron .` from a checkout, whose
// node_modules hold the PC/SC module built for Node, not Electron.
import type { UtilityProcess } from 'electron';
import { type SpawnBridgeChild, forkBridgeChild } from '../server/features/nfc/spawn.ts';
import type { FromChild } from '../server/features/nfc/protocol.ts';

export type NfcChildRuntime =
  | { kind: 'utility-process' }
  /** A Node binary: `nfcNode` (developer override), or this process's when not in Electron. */
  | { kind: 'node-fork'; execPath: string };

export interface NfcChildContext {
  /** process.versions.electron is set. */
  inElectron: boolean;
  /** app.isPackaged. */
  packaged: boolean;
  /** settings.json `nfcNode`. */
  nfcNode: string | undefined;
  /** process.execPath. */
  execPath: string;
}

export function chooseNfcChildRuntime(ctx: NfcChildContext): { runtime: NfcChildRuntime; problems: string[] } {
  if (!ctx.inElectron) return { runtime: { kind: 'node-fork', execPath: ctx.execPath }, problems: [] };
  if (ctx.nfcNode && !ctx.packaged) return { runtime: { kind: 'node-fork', execPath: ctx.nfcNode }, problems: [] };
  // A separate Node cannot read the bridge's script inside app.asar: the override is for checkouts.
  const problems = ctx.nfcNode ? ['nfcNode is a developer setting for running from a checkout; the installed app ignores it'] : [];
  return { runtime: { kind: 'utility-process' }, problems };
}

/** The part of Electron's utilityProcess module the bridge uses (passed in: tests have no Electron). */
export interface UtilityProcessModule {
  fork(modulePath: string, args?: string[], options?: { env?: NodeJS.ProcessEnv; stdio?: Array<'ignore' | 'pipe'>; serviceName?: string }): UtilityProcessChild;
}
type UtilityProcessChild = Pick<UtilityProcess, 'postMessage' | 'kill' | 'stderr'> & {
  on(event: 'message', listener: (message: unknown) => void): unknown;
  once(event: 'exit', listener: (code: number) => void): unknown;
};

/** Electron's utilityProcess.fork behind the bridge's spawner interface. */
export function utilityProcessSpawner(utilityProcess: UtilityProcessModule): SpawnBridgeChild {
  return ({ script, env }) => {
    const child = utilityProcess.fork(script, [], { env, stdio: ['ignore', 'ignore', 'pipe'], serviceName: 'Waymark NFC bridge' });
    let alive = true;
    child.once('exit', () => (alive = false));
    return {
      send(message) {
        if (alive) child.postMessage(message);
      },
      onMessage: (listener) => void child.on('message', (message) => listener(message as FromChild)),
      // utilityProcess reports an exit code only; a killed child's code stands in for the signal.
      onExit: (listener) => void child.once('exit', (code) => listener(code, null)),
      onStderr: (listener) => void child.stderr?.on('data', (d: Buffer) => listener(d.toString())),
      kill: () => void child.kill(),
      get alive() {
        return alive;
      },
    };
  };
}

export function nfcChildSpawner(runtime: NfcChildRuntime, utilityProcess: UtilityProcessModule): SpawnBridgeChild {
  return runtime.kind === 'utility-process' ? utilityProcessSpawner(utilityProcess) : forkBridgeChild(runtime.execPath);
}
