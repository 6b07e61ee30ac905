import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * What a suite does without a system package, run in a fresh Node so that CI is read at load
 * (test/support/system.ts): outside CI a visible skip, under CI a failure.
 */
const system = join(import.meta.dirname, 'system.ts');

function missingPackage(ci: string): { status: number | null; stdout: string; stderr: string } {
  const program = `const m = await import(${JSON.stringify(system)}); console.log(JSON.stringify(m.needsPackage('no-such-package', false, 'a tool')));`;
  const env = { ...process.env, CI: ci };
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', program], { env, encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('a missing system package', () => {
  it('outside CI is a skip with a reason naming the package', () => {
    for (const ci of ['', 'false', '0']) {
      const r = missingPackage(ci);
      expect(r.status, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toBe('needs a tool: apt-get install no-such-package');
      expect(r.stderr).toContain('skipped: needs a tool: apt-get install no-such-package');
    }
  });

  it('under CI fails (it throws where the suite decides to skip)', () => {
    for (const ci of ['true', '1']) {
      const r = missingPackage(ci);
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain('needs a tool: apt-get install no-such-package (CI is set: a missing system requirement fails the run');
    }
  });
});
