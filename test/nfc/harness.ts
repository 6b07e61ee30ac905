/**
 * Test harness for the real PC/SC stack with a virtual reader: starts a private
 * `pcscd --foreground` (in its own mount + network namespaces when possible, see
 * pcscd-sandbox.ts), exposes the daemon's socket path (clients reach it through
 * PCSCLITE_CSOCK_NAME) and card endpoints for VirtualTag, and can stop/start/restart the daemon.
 *
 * `nfcSkipReason()` names the missing Debian package so a suite can skip with one line.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import readline from 'node:readline';
import { needsPackage, systemSkip } from '../support/system.ts';
import type { CardEndpoint } from './vpcd-card.ts';

const sandboxScript = join(import.meta.dirname, 'pcscd-sandbox.ts');

/**
 * Null when the NFC suites can run; otherwise a one-line reason naming the missing package
 * (through systemSkip: under CI it throws).
 */
export function nfcSkipReason(): string | null {
  const hasPcscd = ['/usr/sbin/pcscd', '/usr/bin/pcscd'].some((p) => existsSync(p));
  return (
    needsPackage('pcscd', hasPcscd, 'the PC/SC daemon pcscd') ??
    needsPackage('vsmartcard-vpcd', existsSync('/usr/lib/pcsc/drivers/serial/libifdvpcd.so'), 'the virtual reader driver vpcd') ??
    nfcModuleSkipReason()
  );
}

/**
 * Null when nfc-pcsc's native module (optional: its build needs libpcsclite-dev) loads under
 * this Node; otherwise why, through systemSkip.
 */
export function nfcModuleSkipReason(): string | null {
  try {
    createRequire(import.meta.url)('@pokusew/pcsclite');
    return null;
  } catch (err) {
    const why = (err as Error).message.includes('NODE_MODULE_VERSION')
      ? 'it is built for another Node: npm ci rebuilds it for the Node that npm scripts run'
      : 'it did not build: apt-get install libpcsclite-dev, then npm ci';
    return systemSkip(`needs nfc-pcsc's native module (@pokusew/pcsclite), which does not load: ${why}`);
  }
}

let namespacesUsable: boolean | null = null;
function canUnshare(): boolean {
  if (process.env.WAYMARK_NFC_NO_NAMESPACES) return false; // force the host fallback
  if (namespacesUsable === null) {
    const r = spawnSync('unshare', ['--mount', '--net', '--fork', 'true'], { stdio: 'ignore' });
    namespacesUsable = r.status === 0;
  }
  return namespacesUsable;
}

export interface PcscSandbox {
  /** pcscd's socket: give it to PC/SC clients as PCSCLITE_CSOCK_NAME. */
  readonly socketPath: string;
  /** Environment for a PC/SC client process (the NFC bridge child). */
  readonly env: Record<string, string>;
  /** True when pcscd runs in private namespaces. */
  readonly namespaced: boolean;
  /** The host vpcd is reached on inside the sandbox (127.0.0.2 = quickack route). */
  readonly cardHost: string;
  /** Where a virtual card for reader `index` connects. */
  endpoint(index?: 0 | 1): CardEndpoint;
  stopPcscd(): Promise<void>;
  startPcscd(): Promise<void>;
  restartPcscd(): Promise<void>;
  log(): string;
  close(): Promise<void>;
}

export interface SandboxOptions {
  /** Rename the virtual readers, e.g. 'ACS ACR122U PICC Interface' (namespaced mode only). */
  readerName?: string;
  /** Start pcscd with no reader configured (namespaced mode only). */
  noReaders?: boolean;
}

export async function startPcscSandbox(options: SandboxOptions = {}): Promise<PcscSandbox> {
  const dir = mkdtempSync(join(tmpdir(), 'waymark-pcsc-'));
  const namespaced = canUnshare();
  const node = process.execPath;
  const args = [sandboxScript, dir, namespaced ? 'ns' : 'host', options.noReaders ? '-' : (options.readerName ?? '')];
  const child: ChildProcess = namespaced
    ? spawn('unshare', ['--mount', '--net', '--fork', node, ...args], { stdio: ['pipe', 'pipe', 'inherit'] })
    : spawn(node, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = readline.createInterface({ input: child.stdout! });
  const queue: string[] = [];
  const waiters: Array<(line: string) => void> = [];
  lines.on('line', (line) => {
    const w = waiters.shift();
    if (w) w(line);
    else queue.push(line);
  });
  let exited = false;
  child.once('exit', () => {
    exited = true;
    for (const w of waiters.splice(0)) w('error sandbox exited');
  });
  const nextLine = (): Promise<string> => {
    const l = queue.shift();
    if (l !== undefined) return Promise.resolve(l);
    if (exited) return Promise.resolve('error sandbox exited');
    return new Promise((resolve) => waiters.push(resolve));
  };
  const first = await nextLine();
  if (!first.startsWith('ready')) {
    child.kill('SIGKILL');
    throw new Error(`pcscd sandbox failed: ${first}\n${safeRead(join(dir, 'pcscd.log'))}`);
  }
  const cardHost = first.split(' ')[1] ?? '127.0.0.1';
  const command = async (cmd: string): Promise<void> => {
    child.stdin!.write(`${cmd}\n`);
    const reply = await nextLine();
    if (reply !== `ok ${cmd}`) throw new Error(`pcscd sandbox ${cmd}: ${reply}`);
  };
  const socketPath = namespaced ? join(dir, 'run', 'pcscd.comm') : '/run/pcscd/pcscd.comm';
  return {
    socketPath,
    env: { PCSCLITE_CSOCK_NAME: socketPath },
    namespaced,
    cardHost,
    endpoint: (index = 0) => ({ path: join(dir, `vpcd${index}.sock`) }),
    stopPcscd: () => command('stop'),
    startPcscd: () => command('start'),
    restartPcscd: () => command('restart'),
    log: () => safeRead(join(dir, 'pcscd.log')),
    close: async () => {
      if (!exited) {
        const done = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.stdin!.end('exit\n');
        const t = setTimeout(() => child.kill('SIGKILL'), 5000);
        await done;
        clearTimeout(t);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function safeRead(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
