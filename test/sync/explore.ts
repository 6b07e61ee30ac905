/**
 * Hunts for failing seeds of the sync model outside vitest (no time limit), and prints each
 * failure with its seed, path and shrunk steps, ready for regressions.test.ts.
 *
 *   node test/sync/explore.ts [runs=100] [--processes] [--seed N] [--max commands] [--v1] [--no-shrink]
 *   node test/sync/explore.ts 1 --seed N --path P --replay R   # replays one failure (as printed)
 *
 * A run that takes longer than --hang seconds (120), or more than 3 GiB, is a failure too: its
 * seed and steps so far are printed and the hunt stops (vitest would only say that it timed out).
 */
import fc from 'fast-check';
import { type Model, syncProperty } from './model.ts';

const args = process.argv.slice(2);
const valueOf = (flag: string) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);
const runs = Number(args[0] && /^\d+$/.test(args[0]) ? args[0] : 100);
const processes = args.includes('--processes');
const maxCommands = valueOf('--max');
const path = valueOf('--path');
const replayPath = valueOf('--replay');
const hangMs = Number(valueOf('--hang') ?? 120) * 1000;
// Drawn here rather than by fast-check, so that a run which never ends can still be named.
const seed = Number(valueOf('--seed') ?? (Math.random() * 2 ** 32) | 0);

let current: { model: Model; since: number; index: number } | null = null;
let index = 0;
const watchdog = setInterval(() => {
  const rss = Math.round(process.memoryUsage().rss / 2 ** 20);
  // Memory too: a run that loops while collecting rows must not take the shared machine down.
  if (!current || (Date.now() - current.since < hangMs && rss < 3072)) return;
  console.log(`HUNG: run ${current.index} of seed ${seed} has taken ${Math.round((Date.now() - current.since) / 1000)} s so far, rss ${rss} MiB`);
  console.log(`steps so far:\n  ${current.model.log.join('\n  ')}`);
  process.exit(2);
}, 1000);
watchdog.unref();

const started = Date.now();
const result = await fc.check(
  syncProperty({
    processes,
    generators: args.includes('--v1') ? 'v1' : 'v2',
    ...(maxCommands ? { maxCommands: Number(maxCommands) } : {}),
    ...(replayPath ? { replayPath } : {}),
    onRun: (model) => {
      if (args.includes('--progress')) console.error(`run ${index} (rss ${Math.round(process.memoryUsage().rss / 2 ** 20)} MiB)`);
      current = { model, since: Date.now(), index: index++ };
    },
  }),
  { numRuns: runs, endOnFailure: args.includes('--no-shrink'), seed, ...(path ? { path } : {}) },
);
console.log(`${result.numRuns} runs in ${Math.round((Date.now() - started) / 1000)} s (${processes ? 'processes' : 'in-process'}), seed ${seed}`);
if (result.failed) {
  const shown = String(result.counterexample?.[0] ?? '');
  const failedPath = result.counterexamplePath;
  const failedReplay = /replayPath="([^"]*)"/.exec(shown)?.[1];
  console.log(`FAILED: { seed: ${result.seed}, path: ${JSON.stringify(failedPath)}, replayPath: ${JSON.stringify(failedReplay)} }`);
  console.log(`counterexample: ${shown}`);
  console.log(String(result.errorInstance instanceof Error ? result.errorInstance.message : result.errorInstance));
  process.exitCode = 1;
}
