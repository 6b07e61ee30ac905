// Builds the console (renderer/) into out/renderer for the headless server's /console/.
//   node scripts/build-console.ts           build
//   node scripts/build-console.ts --if-stale build only when the sources are newer than the build
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const CONSOLE_OUT_DIR = join(root, 'out', 'renderer');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

function isStale(): boolean {
  const index = join(CONSOLE_OUT_DIR, 'index.html');
  if (!existsSync(index)) return true;
  const built = statSync(index).mtimeMs;
  return [join(root, 'renderer'), join(root, 'server', 'schemas')].some((dir) => newestMtime(dir) > built);
}

if (process.argv.includes('--if-stale') && !isStale()) {
  console.log('console: up to date (out/renderer)');
} else {
  // Imported lazily: an install without dev dependencies has no vite (and then no console build).
  let vite: typeof import('vite');
  let config: typeof import('../renderer/vite.config.ts');
  try {
    vite = await import('vite');
    config = await import('../renderer/vite.config.ts');
  } catch {
    console.warn('console: vite is not installed (dev dependencies omitted?): the console was not built; /console/ will say so.');
    process.exit(0);
  }
  console.log('console: building renderer/ into out/renderer …');
  await vite.build({ ...config.rendererConfig, configFile: false, logLevel: 'warn' });
  console.log('console: built');
}
