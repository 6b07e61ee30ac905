/** The printing feature's public face: label sheets, printer profiles and the QR code style. */
export { defaultResourcesDir } from './layouts.ts';
export { PrintersRepo } from './repo.ts';
export { ManifestPrintQueryDoc, PDF_CONTENT, printHeaders, printingRoutes, sendManifestPdf } from './routes.ts';
export { loadPrintResources, PrintService } from './service.ts';
export { QrStyleRepo } from './qrStyleRepo.ts';
export { qrStyleRoutes } from './qrStyleRoutes.ts';
export { QrStyleService } from './qrStyleService.ts';
