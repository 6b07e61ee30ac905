// A stand-in for Electron's utilityProcess module (no Electron binary on these machines): the
// same surface main/nfc-child.ts uses (fork → postMessage, 'message', 'exit' with a code, kill,
// stderr), backed by a Node child whose process.parentPort is parent-port-shim.ts; only messages
// that went through parentPort get through, both ways.
import { fork } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import type { UtilityProcessModule } from '../../main/nfc-child.ts';

export const utilityProcessStandIn: UtilityProcessModule = {
  fork(modulePath, args = [], options = {}) {
    const child = fork(modulePath, args, {
      env: options.env,
      execArgv: ['--import', join(import.meta.dirname, 'parent-port-shim.ts')],
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    const emitter = new EventEmitter();
    child.on('message', (raw) => {
      const wire = raw as { viaParentPort?: unknown };
      if (wire && 'viaParentPort' in wire) emitter.emit('message', wire.viaParentPort);
    });
    child.on('error', () => {});
    // Like Electron: one 'exit' with a number (a signal-killed child reports a non-zero code).
    child.once('exit', (code) => emitter.emit('exit', code ?? 1));
    return Object.assign(emitter, {
      postMessage: (message: unknown) => void (child.connected && child.send({ toParentPort: message })),
      kill: () => child.kill(),
      stderr: child.stderr,
    }) as unknown as ReturnType<UtilityProcessModule['fork']>;
  },
};
