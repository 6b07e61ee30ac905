/**
 * The backup feature's public face: a whole organization exported as one versioned JSON document
 * and imported into an empty organization, on this or another instance (`waymark export --org`,
 * `waymark import --org`; docs/backup.md).
 */
export { type BackupServices, exportOrganization } from './exporter.ts';
export { type ImportedWebhook, importOrganization, type OrganizationImportReport } from './importer.ts';
