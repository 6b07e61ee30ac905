/**
 * NTAG 424 DNA cryptography (AES-128): CMAC, AN10922 key diversification, Secure Dynamic
 * Messaging (SUN). Pure functions over Buffers, no I/O: the scan-time verification and the
 * personalisation over PC/SC both build on these.
 */
export { AesBlock, AesCmac, aesCmac, aesEncryptBlock, cmacSubkeys, type BlockCipher } from './cmac.ts';
export { diversifyAes128Key, ntag424TagKey, WAYMARK_SYSTEM_IDENTIFIER } from './diversify.ts';
export { NTAG424_KEY, ntag424FileReadKey, ntag424KeySet, ntag424MetaReadKey, type Ntag424KeySet } from './keys.ts';
export {
  computeSdmMac,
  decryptPiccData,
  emptyMessageCmac,
  encryptPiccData,
  PiccDecryptor,
  PICC_DATA_TAG_UID_AND_COUNTER,
  SDM_READ_COUNTER_MAX,
  sdmMacMatches,
  sdmSessionMacKey,
  truncateMac,
  type PiccData,
} from './sdm.ts';
export { checkSunMessage, parseSunParams, SUN_PARAM, SUN_URL_TEMPLATE_SUFFIX, SunQueries, sunQueryFor, type SunCheck, type SunParams } from './sun.ts';
