import { cpSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'electron-vite';
import type { Plugin } from 'vite';
import { rendererConfig } from './renderer/vite.config.ts';

// import.meta.url, not import.meta.dirname: config files are bundled before they run, and the
// bundler rewrites only import.meta.url to the original file's address.
const here = dirname(fileURLToPath(import.meta.url));

/**
 * The main bundle carries the server (startServer runs in-process); the server reads its SQL
 * migrations from `<dir of the bundle>/migrations`, so they are copied beside it.
 */
function copyMigrations(): Plugin {
  return {
    name: 'waymark-copy-migrations',
    apply: 'build',
    closeBundle() {
      cpSync(resolve(here, 'server/db/migrations'), resolve(here, 'out/main/migrations'), { recursive: true });
    },
  };
}

/**
 * electron-vite forces `base: './'` on production renderer builds; the console is one bundle for
 * Electron and browsers, served by the server at /console/ with client-side routes below it, so
 * its assets must be addressed from /console/.
 */
function consoleBase(): Plugin {
  return { name: 'waymark-console-base', config: () => ({ base: '/console/' }) };
}

export default defineConfig({
  main: {
    plugins: [copyMigrations()],
    build: {
      outDir: 'out/main',
      externalizeDeps: true,
      rolldownOptions: { input: { index: resolve(here, 'main/index.ts') } },
    },
  },
  preload: {
    build: {
      outDir: 'out/preload',
      // A sandboxed preload cannot load ES modules or node_modules: one CommonJS file.
      externalizeDeps: false,
      lib: { entry: resolve(here, 'main/preload/index.ts'), formats: ['cjs'] },
      rolldownOptions: { external: ['electron'], output: { entryFileNames: '[name].cjs' } },
    },
  },
  renderer: {
    ...rendererConfig,
    plugins: [...(rendererConfig.plugins ?? []), consoleBase()],
  },
});
