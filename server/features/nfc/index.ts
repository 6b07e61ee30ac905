/**
 * The NFC feature's public face: tag writing sessions over the local reader. The reader bridge
 * (bridge.ts, its child process) is started by serve.ts and handed to the service.
 */
export type { NfcDevice } from './bridge.ts';
export { MIRROR_PARAM, parseMirror } from './ntag21x.ts';
export { NfcRepo } from './repo.ts';
export { nfcRoutes } from './routes.ts';
export { type NfcEvent, NfcService, type NfcTagKeys } from './service.ts';
export { TagPasswords } from './tagPasswords.ts';
// NTAG 424 DNA cryptography (CMAC, AN10922, SDM/SUN), used at scan time and by personalisation.
export * from './ntag424/index.ts';
