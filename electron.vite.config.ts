import { dirname, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { defineConfig } from 'electron-vite';
import type { Plugin } from 'vite';
import { rendererConfig } from './renderer/vite.config.ts';

// import.meta.url, not import.meta.dirname: config files are bundled before they run, and the
// bundler rewrites only import.meta.url to the original file's address.
const here = dirname(fileURLToPath(import.meta.url));

/**
 * The main bundle carries the server (startServer runs in-process). Server modules find their
 * files (SQL migrations, label layouts in resources/, worker scripts, the NFC bridge child)
 * relative to their own source file; bundled into out/main they would look in the wrong place.
 * So inside server/ `import.meta.dirname` / `import.meta.url` keep the source file's address:
 * `electron .` from the project runs exactly the files the headless server runs. (A packaged
 * app would have to ship server/ and resources/ beside the bundle; packaging is not set up.)
 */
function keepServerPaths(): Plugin {
  const serverDir = resolve(here, 'server') + sep;
  return {
    name: 'waymark-keep-server-paths',
    transform(code, id) {
      if (!id.startsWith(serverDir) || !code.includes('import.meta.')) return null;
      return code
        .replaceAll('import.meta.dirname', JSON.stringify(dirname(id)))
        .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(id).href));
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
    plugins: [keepServerPaths()],
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
