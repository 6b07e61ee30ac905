/**
 * How the bridge starts its PC/SC child. The server must not import Electron, so the bridge takes
 * a spawner: Node's child_process.fork for the headless server (the default), Electron's
 * utilityProcess.fork supplied by the desktop shell (main/nfc-child.ts), where the packaged app
 * has no Node to fork and the RunAsNode fuse forbids running Electron's binary as one.
 */
import { fork } from 'node:child_process';
import type { FromChild, ToChild } from './protocol.ts';

/** A running bridge child, whatever started it. */
export interface BridgeChild {
  /** Best effort: a child going away drops the message (its exit is reported). */
  send(message: ToChild): void;
  onMessage(listener: (message: FromChild) => void): void;
  /** Called once, when the process has ended (code null when a signal ended it). */
  onExit(listener: (code: number | null, signal: string | null) => void): void;
  /** Text the child writes to stderr, for the log when it dies. */
  onStderr(listener: (text: string) => void): void;
  /** Ends it now (SIGKILL or the platform's equivalent). */
  kill(): void;
  /** False once it has exited or its channel is closed. */
  readonly alive: boolean;
}

export interface SpawnRequest {
  /** The child's entry script (bridge-child.ts from the sources, bridge-child.js in the app). */
  script: string;
  env: NodeJS.ProcessEnv;
}

export type SpawnBridgeChild = (request: SpawnRequest) => BridgeChild;

/**
 * child_process.fork on `execPath` (default: this process's Node). With execPath the desktop
 * shell's developer override (settings.json `nfcNode`) runs the child on a separate Node.
 */
export function forkBridgeChild(execPath?: string): SpawnBridgeChild {
  return ({ script, env }) => {
    const child = fork(script, [], {
      env,
      execArgv: [],
      ...(execPath ? { execPath } : {}),
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    child.on('error', () => {}); // a failed spawn or send also ends in 'exit'
    return {
      send(message) {
        try {
          if (child.connected) child.send(message);
        } catch {
          // the child is going away; its exit is reported
        }
      },
      onMessage: (listener) => void child.on('message', (raw) => listener(raw as FromChild)),
      onExit: (listener) => void child.once('exit', (code, signal) => listener(code, signal)),
      onStderr: (listener) => void child.stderr?.on('data', (d: Buffer) => listener(d.toString())),
      kill: () => void child.kill('SIGKILL'),
      get alive() {
        return child.connected && child.exitCode === null && child.signalCode === null;
      },
    };
  };
}
