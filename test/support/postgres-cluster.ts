/**
 * A private PostgreSQL cluster for a test run: initdb in a temp dir, pg_ctl start on a free port
 * on 127.0.0.1 (its socket in the same dir), no system service. Tests run as root here, and
 * PostgreSQL refuses to run as root, so the cluster then belongs to the `postgres` user that
 * Debian's package creates.
 */
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { chownSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postgresBinDir } from './system.ts';

export interface PostgresCluster {
  /** postgres://postgres@127.0.0.1:PORT/postgres */
  readonly url: string;
  stop(): void;
}

/** The uid/gid to run PostgreSQL as: ours, or the `postgres` user's when we are root. */
function runAs(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith('postgres:'));
  if (!line) throw new Error('running as root and there is no postgres user to run PostgreSQL as (apt-get install postgresql creates it)');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** Starts a cluster, or returns null (saying why in one line) when PostgreSQL is not installed. */
export async function startPostgresCluster(log: (line: string) => void = console.log): Promise<PostgresCluster | null> {
  const bin = postgresBinDir();
  if (!bin) {
    log('PostgreSQL: not installed (apt-get install postgresql): WAYMARK_TEST_DATABASE stays unset and PostgreSQL suites skip');
    return null;
  }
  const user = runAs();
  const dir = mkdtempSync(join(tmpdir(), 'waymark-pg-'));
  if (user) chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  const opts: SpawnSyncOptions = { encoding: 'utf8', cwd: dir, ...(user ?? {}) };
  const run = (tool: string, args: string[]): void => {
    const r = spawnSync(join(bin, tool), args, opts);
    if (r.status !== 0) throw new Error(`${tool} failed (${r.error?.message ?? `exit ${r.status}`}): ${String(r.stderr).trim()}`);
  };
  try {
    run('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
    // A free port can be taken between the probe and the bind: try a few.
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      // Disk durability off (a test cluster lives for one run); synchronous_commit stays at its
      // default, on, as in production: tests check that deferred-flush transactions turn it off.
      const server = `-p ${port} -h 127.0.0.1 -k ${dir} -c fsync=off -c full_page_writes=off`;
      try {
        run('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '60', '-o', server, 'start']);
      } catch (err) {
        if (attempt < 3) continue;
        throw new Error(`${(err as Error).message}\n${readFileSync(join(dir, 'server.log'), 'utf8').split('\n').slice(-5).join('\n')}`, { cause: err });
      }
      log(`PostgreSQL: private cluster on 127.0.0.1:${port} (${bin}) as WAYMARK_TEST_DATABASE`);
      return {
        url: `postgres://postgres@127.0.0.1:${port}/postgres`,
        stop: () => {
          spawnSync(join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop'], { ...opts, stdio: 'ignore' });
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
