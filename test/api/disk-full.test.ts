/**
 * A full data volume, for real: a small tmpfs holds the data directory and the server's log
 * (its stdout and stderr), a real `waymark serve` process runs on it, and the test fills the
 * volume to the last byte. Writes then answer 507 in the spec's error format, /healthz says
 * why, the log gets one line with a count instead of a stack trace per request (written once
 * there is room again), the process survives its log being unwritable, recovers when space
 * is freed, and SIGTERM on a full volume exits cleanly. Needs root for the mount (CI runs as
 * root; elsewhere it skips, and under CI a missing mount fails the run).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { appendFileSync, closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { apiRequest, repoRoot } from '../support/server.ts';
import { systemSkip } from '../support/system.ts';

const volume = mkdtempSync(join(tmpdir(), 'waymark-full-'));

/** Mounts a 24 MiB tmpfs on `volume`; a reason when this machine cannot. */
function mountTmpfs(): string | null {
  if (process.getuid?.() !== 0) return 'needs root to mount a small tmpfs (mount -t tmpfs): run as root, as CI does';
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=24m,mode=0755', 'tmpfs', volume], { encoding: 'utf8' });
  if (r.error) return 'needs mount (Debian package mount/util-linux) to make a small tmpfs';
  if (r.status !== 0) return `cannot mount a tmpfs here (${r.stderr.trim()}): needs root with CAP_SYS_ADMIN, as CI has`;
  return null;
}
const skip = systemSkip(mountTmpfs());

afterAll(() => {
  if (!skip) spawnSync('umount', ['-l', volume]);
  rmSync(volume, { recursive: true, force: true });
});

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
const NODE = { label: 'on a full disk', function_type: 'redirect', payload: { url: 'https://example.com/full' } };
const FULL = { data: null, error: 'Insufficient storage: free space on the data volume' };

/**
 * Writes zeros into `file` until the volume has no byte left. The log is first padded to a
 * page boundary (tmpfs allocates whole pages), so that the server's next log line needs a page
 * the volume no longer has.
 */
function fill(file: string, log: string): void {
  const slack = (4096 - (statSync(log).size % 4096)) % 4096;
  if (slack > 0) appendFileSync(log, `${'.'.repeat(slack - 1)}\n`);
  const fd = openSync(file, 'w');
  try {
    for (const size of [1 << 20, 1 << 12, 1]) {
      const chunk = Buffer.alloc(size);
      for (;;) {
        try {
          writeSync(fd, chunk);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw err;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
}

interface Served {
  child: ChildProcess;
  url: string;
  key: string;
  log: () => string;
  exited: Promise<number | null>;
}

const CLI = join(repoRoot, 'server', 'cli.ts');
const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('WAYMARK_')));

/** An organization with an enterprise key (the test's few hundred writes stay under its limits). */
function enterpriseKey(data: string): string {
  const cli = (...args: string[]) => {
    const r = spawnSync(process.execPath, [CLI, ...args, '--data', data, '--json'], { encoding: 'utf8', env: clean });
    if (r.status !== 0) throw new Error(`waymark ${args.join(' ')}: ${r.stderr}`);
    return JSON.parse(r.stdout);
  };
  const org = cli('org', 'create', '--name', 'Full disk');
  return cli('keys', 'create', '--org', org.org.id, '--name', 'test', '--plan', 'enterprise').api_key;
}

async function serve(data: string, logFile: string): Promise<Served> {
  const key = enterpriseKey(data);
  const out = openSync(logFile, 'a');
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--data', data, '--no-nfc'], {
    env: clean,
    stdio: ['ignore', out, out],
  });
  closeSync(out);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const log = () => readFileSync(logFile, 'utf8');
  const banner = await vi.waitFor(
    () => {
      if (child.exitCode !== null) throw new Error(`serve exited ${child.exitCode}: ${log()}`);
      const text = log();
      const url = /listening on (http:\/\/\S+)/.exec(text)?.[1];
      if (!url || !/Console: /.test(text)) throw new Error('not yet');
      return { url, key };
    },
    { timeout: 30_000, interval: 50 },
  );
  return { child, ...banner, log, exited };
}

describe.skipIf(skip)('a full data volume (tmpfs, real server process)', () => {
  it('answers writes 507, reports it on /healthz, logs one line with a count, survives its log, recovers, and stops cleanly', { timeout: 120_000 }, async () => {
    const data = join(volume, 'data');
    const logFile = join(volume, 'server.log');
    const filler = join(volume, 'filler');
    const server = await serve(data, logFile);
    try {
      const api = (method: string, path: string, body?: unknown) => apiRequest(server.url, method, path, body, server.key);
      const created = await api('POST', '/nodes', NODE);
      expect(created.status).toBe(201);
      const scan = () => fetch(`${server.url}/v/${created.body.data.slug}`, { redirect: 'manual', headers: { 'user-agent': IPHONE } });
      expect((await scan()).status).toBe(302);
      const before = server.log().length;

      fill(filler, logFile);
      // A scan that cannot be recorded is not answered as if it were: the visitor is asked to try
      // again. (A small scan may still fit in pages SQLite holds: scan until one is refused.)
      let refused = await scan();
      for (let i = 0; i < 500 && refused.status === 302; i++) refused = await scan();
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('1');
      // Pages SQLite already holds (the WAL, once a checkpoint lets it start over) still take a
      // write now and then: write until 20 in a row are refused. Every answer is a created node
      // or the 507, never a 500.
      let refusedInARow = 0;
      for (let i = 0; i < 500 && refusedInARow < 20; i++) {
        const res = await api('POST', '/nodes', NODE);
        if (res.status === 201) {
          refusedInARow = 0;
          continue;
        }
        expect(res.status, `${JSON.stringify(res.body)}\n${server.log().slice(before)}`).toBe(507);
        expect(res.body).toEqual(FULL);
        refusedInARow++;
      }
      expect(refusedInARow).toBe(20);
      // Reads still work, and the process is alive although its log cannot be written.
      expect((await api('GET', '/nodes?limit=1')).status).toBe(200);
      const health = await fetch(`${server.url}/healthz`);
      expect(health.status).toBe(503);
      const report = (await health.json()) as { status: string; reason: string };
      expect(report.status).toBe('failing');
      expect(report.reason).toMatch(/^writes failing: the data volume is full \(\d+ failed writes since \S+\)$/);
      const failingCount = Number(/\((\d+) failed writes/.exec(report.reason)![1]);
      expect(server.child.exitCode).toBeNull();

      // Room again: the next write works, health is back, and the log has what it missed.
      unlinkSync(filler);
      expect((await api('POST', '/nodes', NODE)).status).toBe(201);
      const healthy = await fetch(`${server.url}/healthz`);
      expect(healthy.status).toBe(200);
      expect(((await healthy.json()) as { status: string }).status).toBe('ok');
      const logged = await vi.waitFor(
        () => {
          const text = server.log().slice(before);
          if (!/writes work again/.test(text)) throw new Error(`no recovery line yet:\n${text}`);
          return text;
        },
        { timeout: 10_000, interval: 50 },
      );
      expect(logged).not.toMatch(/^\s+at /m); // no stack trace
      expect(logged.match(/storage: writes failing/g)?.length ?? 0).toBeLessThanOrEqual(1);
      // The server's log was on the full volume: what it could not write is said once there is room.
      expect(logged).toMatch(/\(\d+ log writes were lost: the log's volume was full or failing\)/);
      // The count runs since the last write that worked: a write that slipped through while the
      // volume was full (pages SQLite held, a background write) logged a recovery and started
      // over. The last recovery line counts at least what /healthz reported just before.
      const recoveries = [...logged.matchAll(/writes work again after (\d+) failed writes/g)];
      expect(recoveries.length).toBeGreaterThan(0);
      expect(Number(recoveries.at(-1)![1])).toBeGreaterThanOrEqual(failingCount);
      expect(failingCount).toBeGreaterThan(0);

      // Full again, then SIGTERM: a clean exit.
      fill(filler, logFile);
      let failing = await api('POST', '/nodes', NODE);
      for (let i = 0; i < 200 && failing.status === 201; i++) failing = await api('POST', '/nodes', NODE);
      expect(failing.status).toBe(507);
      server.child.kill('SIGTERM');
      const code = await server.exited;
      unlinkSync(filler);
      expect(code, server.log()).toBe(0);
    } finally {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
    }
  });
});
