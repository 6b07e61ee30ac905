/**
 * The batches feature's public face: batches of nodes generated in the background (a chunk per
 * transaction, one process per batch at a time), their manifests and their life cycle.
 */
export { BatchGenerator, type BatchGeneratorOptions } from './generator.ts';
export { type BatchRow, BatchesRepo } from './repo.ts';
export { batchRoutes } from './routes.ts';
export { formatSerial } from './serial.ts';
export { type BatchServiceDeps, BatchService, type CreateBatchInput, type GenerationLease, MANIFEST_READY, type ManifestRow, type RemoteSerials } from './service.ts';
