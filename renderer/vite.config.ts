import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import react from '@vitejs/plugin-react';
import type { Plugin, UserConfig } from 'vite';

// import.meta.url, not import.meta.dirname: config files are bundled before they run, and the
// bundler rewrites only import.meta.url to the original file's address.
const root = dirname(fileURLToPath(import.meta.url));
export const CONSOLE_OUT_DIR = resolve(root, '..', 'out', 'renderer');
/** Gzipped JavaScript the first screen may load (issue 5: aim under 300 KB). */
export const FIRST_SCREEN_BUDGET = 300 * 1024;

interface ChunkLike {
  type: 'chunk' | 'asset';
  fileName: string;
  isEntry?: boolean;
  imports?: string[];
  code?: string;
}

/**
 * Prints the gzipped size of the JavaScript the first screen loads (the entry chunk and
 * everything it imports statically; lazily loaded screens are not counted) and fails the build
 * when it is over budget.
 */
export function firstScreenSizeCheck(budget = FIRST_SCREEN_BUDGET): Plugin {
  return {
    name: 'waymark-first-screen-size',
    apply: 'build',
    generateBundle(_options, bundle) {
      const chunks = bundle as unknown as Record<string, ChunkLike>;
      const entry = Object.values(chunks).find((c) => c.type === 'chunk' && c.isEntry);
      if (!entry) return;
      const seen = new Set<string>();
      const walk = (name: string) => {
        if (seen.has(name)) return;
        seen.add(name);
        for (const dep of chunks[name]?.imports ?? []) walk(dep);
      };
      walk(entry.fileName);
      let raw = 0;
      let gz = 0;
      for (const name of seen) {
        const code = chunks[name]?.code ?? '';
        raw += Buffer.byteLength(code);
        gz += gzipSync(code, { level: 9 }).length;
      }
      let lazy = 0;
      for (const c of Object.values(chunks)) {
        if (c.type === 'chunk' && !seen.has(c.fileName)) lazy += gzipSync(c.code ?? '', { level: 9 }).length;
      }
      const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
      const line = `[bundle-size] first screen JS: ${kb(gz)} gzipped (${kb(raw)} raw, ${seen.size} chunk(s)); budget ${kb(budget)}; lazy screens ${kb(lazy)} gzipped`;
      console.log(line);
      if (gz > budget) this.error(`${line}: over budget`);
    },
  };
}

/** The console build, shared by electron.vite.config.ts and `npm run build:console`. */
export const rendererConfig: UserConfig = {
  root,
  base: '/console/',
  plugins: [react(), firstScreenSizeCheck()],
  build: {
    outDir: CONSOLE_OUT_DIR,
    emptyOutDir: true,
    target: 'es2022',
    minify: true,
    sourcemap: false,
    assetsInlineLimit: 0,
    rolldownOptions: { input: resolve(root, 'index.html') },
  },
};

export default rendererConfig;
