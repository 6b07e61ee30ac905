/**
 * The one place that decides what a suite does when the machine lacks something it needs from
 * the system (a Debian package, a native module built for this Node, root for a mount): outside
 * CI it skips, visibly, with a one-line reason naming the package; with CI set it fails the run,
 * because CI installs everything (.ci/run) and a green run must mean every suite ran.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** True under CI (any value of CI but '', 'false' and '0'). */
export const inCi = !['', 'false', '0'].includes(process.env.CI ?? '');

const warned = new Set<string>();

/**
 * Passes `reason` through: null when the need is met; otherwise, outside CI, a reason to hand to
 * `describe.skipIf` / `it.skipIf` / `test.skip` (printed once); under CI it throws instead, which
 * fails the suite's file.
 */
export function systemSkip(reason: string | null): string | null {
  if (reason === null) return null;
  if (inCi) throw new Error(`${reason} (CI is set: a missing system requirement fails the run; .ci/run installs them all)`);
  if (!warned.has(reason)) {
    warned.add(reason);
    console.warn(`skipped: ${reason}`);
  }
  return reason;
}

/** True when `command` can be started (it is on PATH). */
export function hasCommand(command: string, args: string[] = ['--version']): boolean {
  return !spawnSync(command, args, { stdio: 'ignore' }).error;
}

/** Null when `present`; else "needs WHAT: apt-get install PACKAGE", through systemSkip. */
export function needsPackage(debianPackage: string, present: boolean, what = `the Debian package ${debianPackage}`): string | null {
  return systemSkip(present ? null : `needs ${what}: apt-get install ${debianPackage}`);
}

export const CHROMIUM = process.env.WAYMARK_CHROMIUM ?? '/usr/bin/chromium';

export const needs = {
  chromium: (): string | null => needsPackage('chromium', existsSync(CHROMIUM), `Chromium at ${CHROMIUM}`),
  zbar: (): string | null => needsPackage('zbar-tools', hasCommand('zbarimg'), 'zbarimg'),
  poppler: (): string | null => needsPackage('poppler-utils', hasCommand('pdftoppm', ['-v']), 'pdftoppm'),
  /** The private cluster that `npm test` starts (scripts/with-postgres.ts), as WAYMARK_TEST_DATABASE. */
  postgres: (): string | null => {
    if (process.env.WAYMARK_TEST_DATABASE) return null;
    if (!postgresBinDir()) return needsPackage('postgresql', false, 'PostgreSQL (initdb, pg_ctl)');
    return systemSkip('WAYMARK_TEST_DATABASE is unset: run through `npm test` or `npm run with-postgres -- npx vitest run …`, which start a private PostgreSQL cluster');
  },
};

/** The folder of PostgreSQL's server binaries (initdb, pg_ctl): Debian's newest, else PATH. */
export function postgresBinDir(): string | null {
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return join(root, versions[0], 'bin');
  }
  const which = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  const initdb = which.status === 0 ? which.stdout.trim() : '';
  return initdb ? join(initdb, '..') : null;
}
