/** The organization feature's public face: an organization's settings (its scan domain). */
export { OrganizationSettingsRepo } from './repo.ts';
export { organizationRoutes } from './routes.ts';
export { assertPermanentScanBase, LocalScanBaseError } from './scanBaseGuard.ts';
export { scanBaseReach, type ScanBaseReach } from './scanBaseReach.ts';
export { OrganizationService } from './service.ts';
