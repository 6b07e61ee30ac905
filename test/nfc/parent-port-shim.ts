// Loaded with --import into a forked bridge child: gives it Electron's utilityProcess messaging
// (process.parentPort, messages wrapped as { data }) over Node's IPC channel, so bridge-child.ts
// runs its utilityProcess code path here, where there is no Electron binary. Messages are tagged
// on the wire: the stand-in drops anything sent with process.send, so a child that did not take
// the parentPort path is never heard.
const parentPort = {
  postMessage: (message: unknown) => process.send?.({ viaParentPort: message }),
  on: (_event: 'message', listener: (event: { data: unknown }) => void) =>
    process.on('message', (raw) => {
      const wire = raw as { toParentPort?: unknown };
      if (wire && 'toParentPort' in wire) listener({ data: wire.toParentPort });
    }),
};
(process as unknown as { parentPort: typeof parentPort }).parentPort = parentPort;
