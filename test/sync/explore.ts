/**
 * Hunts for failing seeds of the sync model outside vitest (no time limit), and prints each
 * failure with its seed, path and shrunk steps, ready for regressions.test.ts.
 *
 *   node test/sync/explore.ts [runs=100] [--processes] [--seed N] [--max commands] [--v1] [--no-shrink]
 *   node test/sync/explore.ts 1 --seed N --path P --replay R   # replays one failure (as printed)
 */
import fc from 'fast-check';
import { syncProperty } from './model.ts';

const args = process.argv.slice(2);
const runs = Number(args[0] && /^\d+$/.test(args[0]) ? args[0] : 100);
const processes = args.includes('--processes');
const seedArg = args.indexOf('--seed');
const maxArg = args.indexOf('--max');
const valueOf = (flag: string) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);
const path = valueOf('--path');
const replayPath = valueOf('--replay');
const started = Date.now();
const result = await fc.check(syncProperty({ processes, generators: args.includes('--v1') ? 'v1' : 'v2', ...(maxArg >= 0 ? { maxCommands: Number(args[maxArg + 1]) } : {}), ...(replayPath ? { replayPath } : {}) }), {
  numRuns: runs,
  endOnFailure: args.includes('--no-shrink'),
  ...(seedArg >= 0 ? { seed: Number(args[seedArg + 1]) } : {}),
  ...(path ? { path } : {}),
});
console.log(`${result.numRuns} runs in ${Math.round((Date.now() - started) / 1000)} s (${processes ? 'processes' : 'in-process'})`);
if (result.failed) {
  const shown = String(result.counterexample?.[0] ?? '');
  const replayPath = /replayPath="([^"]*)"/.exec(shown)?.[1];
  console.log(`FAILED: { seed: ${result.seed}, path: ${JSON.stringify(result.counterexamplePath)}, replayPath: ${JSON.stringify(replayPath)} }`);
  console.log(`counterexample: ${shown}`);
  console.log(String(result.errorInstance instanceof Error ? result.errorInstance.message : result.errorInstance));
  process.exitCode = 1;
}
