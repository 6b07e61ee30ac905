import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'electron-vite';
import type { Plugin } from 'vite';
import { rendererConfig } from './renderer/vite.config.ts';

// import.meta.url, not import.meta.dirname: config files are bundled before they run, and the
// bundler rewrites only import.meta.url to the original file's address.
const here = dirname(fileURLToPath(import.meta.url));

/** Where the build goes: out/ (the package ships it); the packaging test builds into a temp folder. */
const outRoot = resolve(here, process.env.WAYMARK_BUILD_OUT ?? 'out');

/**
 * The main bundle carries the server (startServer runs in-process). Server modules find their
 * files (SQL migrations, label layouts and fonts in resources/) relative to their own source
 * file. Every bundled file lands in out/main/ (no sub-folders), two levels below the app's root,
 * so inside server/ `import.meta.dirname` / `import.meta.url` become the same place relative to
 * the bundle: the project's own files when run from a checkout (`electron .`), the copies the
 * package ships at the same paths inside the app (electron-builder.json `files`). No absolute
 * path of the build machine gets into the bundle.
 *
 * The two scripts the server starts (the WAL checkpoint worker and the NFC bridge child) are
 * entries of this build, and the server's reference to each is pointed at the bundled .js.
 */
export const RUNTIME_SCRIPTS = [
  { module: 'server/features/scans/sink.ts', source: "new URL('./checkpointer.worker.ts', import.meta.url)", entry: 'checkpointer.worker', input: 'server/features/scans/checkpointer.worker.ts' },
  { module: 'server/features/nfc/bridge.ts', source: "join(import.meta.dirname, 'bridge-child.ts')", entry: 'bridge-child', input: 'server/features/nfc/bridge-child.ts' },
] as const;

function appRelativeServerPaths(): Plugin {
  const serverDir = resolve(here, 'server') + sep;
  return {
    name: 'waymark-app-relative-server-paths',
    enforce: 'pre', // the source text, before TypeScript is compiled away
    transform(code, id) {
      if (!id.startsWith(serverDir) || !code.includes('import.meta.')) return null;
      const rel = relative(here, id).split(sep).join('/');
      // Script references first, kept out of the general rewrite by a placeholder: they point
      // at the bundled script beside the bundle itself.
      const bundleRelative: string[] = [];
      for (const script of RUNTIME_SCRIPTS.filter((s) => s.module === rel)) {
        if (!code.includes(script.source)) throw new Error(`${rel} no longer contains ${script.source}: update RUNTIME_SCRIPTS`);
        const bundled = JSON.stringify(`./${script.entry}.js`);
        const expression = script.source.startsWith('new URL') ? `new URL(${bundled}, import.meta.url)` : `__wmJoin(import.meta.dirname, ${bundled})`;
        code = code.replace(script.source, `__WM_SCRIPT_${bundleRelative.push(expression) - 1}__`);
      }
      code = code
        .replaceAll('import.meta.dirname', `__wmJoin(import.meta.dirname, ${JSON.stringify(`../../${dirname(rel)}`)})`)
        .replaceAll('import.meta.url', `__wmPathToFileURL(__wmJoin(import.meta.dirname, ${JSON.stringify(`../../${rel}`)})).href`)
        .replaceAll(/__WM_SCRIPT_(\d+)__/g, (_m, i: string) => bundleRelative[Number(i)]!);
      return `import { join as __wmJoin } from 'node:path';\nimport { pathToFileURL as __wmPathToFileURL } from 'node:url';\n${code}`;
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
    plugins: [appRelativeServerPaths()],
    build: {
      outDir: join(outRoot, 'main'),
      externalizeDeps: true,
      rolldownOptions: {
        input: { index: resolve(here, 'main/index.ts'), ...Object.fromEntries(RUNTIME_SCRIPTS.map((s) => [s.entry, resolve(here, s.input)])) },
        // Flat: every bundled file is out/main/<name>.js, so import.meta.dirname is the same in all.
        output: { entryFileNames: '[name].js', chunkFileNames: '[name]-[hash].js' },
      },
    },
  },
  preload: {
    build: {
      outDir: join(outRoot, 'preload'),
      // A sandboxed preload cannot load ES modules or node_modules: one CommonJS file.
      externalizeDeps: false,
      lib: { entry: resolve(here, 'main/preload/index.ts'), formats: ['cjs'] },
      rolldownOptions: { external: ['electron'], output: { entryFileNames: '[name].cjs' } },
    },
  },
  renderer: {
    ...rendererConfig,
    build: { ...rendererConfig.build, outDir: join(outRoot, 'renderer') },
    plugins: [...(rendererConfig.plugins ?? []), consoleBase()],
  },
});
