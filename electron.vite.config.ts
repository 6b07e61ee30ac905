import { cpSync } from 'node:fs';
import { resolve } from 'node:path';
import { defineConfig } from 'electron-vite';
import type { Plugin } from 'vite';
import { rendererConfig } from './renderer/vite.config.ts';

const here = import.meta.dirname;

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

export default defineConfig({
  main: {
    plugins: [copyMigrations()],
    build: {
      outDir: 'out/main',
      externalizeDeps: true,
      rollupOptions: { input: { index: resolve(here, 'main/index.ts') } },
    },
  },
  preload: {
    build: {
      outDir: 'out/preload',
      // A sandboxed preload cannot load ES modules or node_modules: one CommonJS file.
      externalizeDeps: false,
      lib: { entry: resolve(here, 'main/preload/index.ts'), formats: ['cjs'] },
      rollupOptions: { external: ['electron'], output: { entryFileNames: '[name].cjs' } },
    },
  },
  renderer: rendererConfig,
});
