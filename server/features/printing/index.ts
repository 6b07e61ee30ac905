/** The printing feature's public face: label sheets and printer profiles. */
export { defaultResourcesDir } from './layouts.ts';
export { PrintersRepo } from './repo.ts';
export { ManifestPrintQueryDoc, PDF_CONTENT, printHeaders, printingRoutes, sendManifestPdf } from './routes.ts';
export { loadPrintResources, PrintService } from './service.ts';
