// A bridge child that reports itself ready, then blocks its event loop forever, like nfc-pcsc
// spinning with no pcscd. Used to check the parent's watchdog.
process.send?.({ type: 'state', state: 'ready', message: 'Reader ready: place a tag.', readers: ['Stalled reader'] });
setTimeout(() => {
  for (;;) {
    // spin
  }
}, 100);
