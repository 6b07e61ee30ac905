/**
 * The nodes feature's public face: other features import nodes only through this file.
 * (Started by the scans conversion for scan_count; the nodes conversion adds the rest.)
 */
export { addScanCounts, lockNodesForScans, prepareScanCount } from './scanCount.ts';
