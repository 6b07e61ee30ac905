// Stands in for nfc-pcsc whose native addon does not load (built for another Node): importing it
// throws the kind of error Node gives then, with a node_modules path in it.
throw new Error(
  "The module '/opt/waymark/node_modules/@pokusew/pcsclite/build/Release/pcsclite.node' was compiled against a different Node.js version using NODE_MODULE_VERSION 115.",
);
