/**
 * The nodes feature's public face. The nodes feature is the one writer of the `nodes` table:
 * other features read and change nodes only through NodeService (its methods taking `tx` join
 * the caller's transaction and record the `node.*` events).
 */
export { applyTemplate, assertNoLockedOverride, assertTemplateFits, isConfigured, validatePartialPayload, validatePayload } from './payload.ts';
export { type NodeFilter, type NodeRow, NodesRepo } from './repo.ts';
export { nodeRoutes } from './routes.ts';
export { type ImportOptions, NodeImporter } from './import.ts';
export { importExportRoutes } from './importExportRoutes.ts';
export { type CreateNodeInput, type NodeChange, NodeService, scanUrl, type TemplateLookup, type UpdateNodeInput } from './service.ts';
export { addScanCounts, addScanCountsInTx, lockNodesForScans, prepareScanCount } from './scanCountRepo.ts';
