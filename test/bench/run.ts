/**
 * `npm run bench [-- name …]`: runs each benchmark in its own process, one after another (they
 * load the machine; running two at once would skew both). Every benchmark prints its figures
 * beside a baseline it measures in the same run. Helper modules (`*-raw-*.ts`, `_*.ts`) are
 * not benchmarks.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const dir = import.meta.dirname;
const wanted = process.argv.slice(2);
const all = readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.startsWith('_') && !f.includes('-raw-'))
  .map((f) => f.replace(/\.ts$/, ''))
  .sort();
const chosen = wanted.length > 0 ? all.filter((name) => wanted.includes(name)) : all;
if (chosen.length === 0) {
  console.error(`no benchmark named ${wanted.join(', ')}; have: ${all.join(', ')}`);
  process.exit(2);
}

let failed = 0;
for (const name of chosen) {
  console.log(`\n=== ${name} ===`);
  const result = spawnSync(process.execPath, [join(dir, `${name}.ts`)], { stdio: 'inherit' });
  if (result.status !== 0) {
    failed++;
    console.error(`${name}: exited with ${result.status ?? result.signal}`);
  }
}
process.exit(failed > 0 ? 1 : 0);
