/**
 * Runs one private pcscd for a test suite. Started by harness.ts, normally as
 * `unshare --mount --net --fork node test/nfc/pcscd-sandbox.ts <dir>` so that the daemon, its
 * socket and vpcd's TCP ports are private to the suite (parallel-safe, restartable).
 *
 * Inside the namespaces: brings `lo` up, adds the quickack route for 127.0.0.2 (vpcd writes the
 * length and the payload separately; without quickack every APDU waits for a delayed ACK), mounts
 * `<dir>/run` over /run/pcscd (so the socket is reachable from outside as <dir>/run/pcscd.comm),
 * optionally renames the virtual readers, starts `pcscd --foreground` and forwards unix sockets
 * `<dir>/vpcd0.sock` / `<dir>/vpcd1.sock` to vpcd's ports (a virtual card outside the network
 * namespace connects there).
 *
 * stdin commands (one per line): `stop`, `start`, `restart`, `exit`. Replies on stdout:
 * `ready`, `ok <command>`, `error <text>`.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, openSync, writeFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import readline from 'node:readline';

const dir = process.argv[2];
const mode = process.argv[3] ?? 'ns'; // 'ns' (inside unshare) or 'host' (fallback)
const readerName = process.argv[4] ?? '';
if (!dir) {
  process.stderr.write('usage: pcscd-sandbox.ts <dir> [ns|host] [reader name]\n');
  process.exit(2);
}

function run(cmd: string, args: string[]): boolean {
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  return r.status === 0;
}

let cardHost = '127.0.0.1';
const runDir = mode === 'ns' ? join(dir, 'run') : '/run/pcscd';
if (mode === 'ns') {
  run('ip', ['link', 'set', 'lo', 'up']);
  if (run('ip', ['route', 'add', 'local', '127.0.0.2/32', 'dev', 'lo', 'table', 'local', 'quickack', '1'])) {
    cardHost = '127.0.0.2';
  }
  mkdirSync(runDir, { recursive: true });
  mkdirSync('/run/pcscd', { recursive: true });
  if (!run('mount', ['--bind', runDir, '/run/pcscd'])) {
    process.stdout.write('error cannot mount a private /run/pcscd\n');
    process.exit(3);
  }
  if (readerName === '-') {
    // No readers at all: an empty reader.conf.d.
    const conf = join(dir, 'reader.conf.d');
    mkdirSync(conf, { recursive: true });
    run('mount', ['--bind', conf, '/etc/reader.conf.d']);
  } else if (readerName) {
    const conf = join(dir, 'reader.conf.d');
    mkdirSync(conf, { recursive: true });
    writeFileSync(
      join(conf, 'vpcd'),
      `FRIENDLYNAME "${readerName}"\nDEVICENAME   /dev/null:0x8C7B\nLIBPATH      /usr/lib/pcsc/drivers/serial/libifdvpcd.so\nCHANNELID    0x8C7B\n`,
    );
    run('mount', ['--bind', conf, '/etc/reader.conf.d']);
  }
}
const socketFile = join(runDir, 'pcscd.comm');

let pcscd: ChildProcess | null = null;
const logFd = openSync(join(dir, 'pcscd.log'), 'a');

function waitFor(check: () => boolean, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  return new Promise((resolve) => {
    const tick = () => {
      if (check()) return resolve(true);
      if (Date.now() > until) return resolve(false);
      setTimeout(tick, 20);
    };
    tick();
  });
}

async function startPcscd(): Promise<void> {
  if (pcscd) return;
  const args = ['--foreground', '--info'];
  if (process.env.WAYMARK_PCSCD_APDU_LOG) args.push('--apdu');
  const child = spawn('pcscd', args, { stdio: ['ignore', logFd, logFd] });
  pcscd = child;
  child.once('exit', () => {
    if (pcscd === child) pcscd = null;
  });
  if (!(await waitFor(() => existsSync(socketFile), 5000))) throw new Error('pcscd did not create its socket');
}

async function stopPcscd(): Promise<void> {
  const child = pcscd;
  if (!child) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), 3000);
  await exited;
  clearTimeout(t);
  pcscd = null;
  if (mode === 'ns') rmSync(socketFile, { force: true });
}

// unix socket -> vpcd TCP forwarders
const servers: net.Server[] = [];
for (const [i, port] of [35963, 35964].entries()) {
  const path = join(dir, `vpcd${i}.sock`);
  rmSync(path, { force: true });
  const server = net.createServer((card) => {
    card.pause();
    const tcp = net.connect(port, cardHost);
    tcp.setNoDelay(true);
    tcp.once('connect', () => {
      card.pipe(tcp);
      tcp.pipe(card);
      card.resume();
    });
    const close = () => {
      card.destroy();
      tcp.destroy();
    };
    tcp.on('error', close);
    tcp.on('close', close);
    card.on('error', close);
    card.on('close', close);
  });
  server.listen(path);
  servers.push(server);
}

async function shutdown(code: number): Promise<never> {
  await stopPcscd();
  for (const s of servers) s.close();
  process.exit(code);
}

process.on('SIGTERM', () => void shutdown(0));

try {
  await startPcscd();
  process.stdout.write(`ready ${cardHost}\n`);
} catch (err) {
  process.stdout.write(`error ${(err as Error).message}\n`);
  await shutdown(1);
}

const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => {
  const cmd = line.trim();
  void (async () => {
    try {
      if (cmd === 'stop') await stopPcscd();
      else if (cmd === 'start') await startPcscd();
      else if (cmd === 'restart') {
        await stopPcscd();
        await startPcscd();
      } else if (cmd === 'exit') await shutdown(0);
      else throw new Error(`unknown command ${cmd}`);
      process.stdout.write(`ok ${cmd}\n`);
    } catch (err) {
      process.stdout.write(`error ${(err as Error).message}\n`);
    }
  })();
});
rl.on('close', () => void shutdown(0));
