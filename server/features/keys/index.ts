/** The keys feature's public face: organizations and their API keys. */
export { type ApiKeyRow, KeysRepo, type OrgRow } from './repo.ts';
export { keyRoutes } from './routes.ts';
export { ADMIN_KEY_NEEDED, type AuthenticatedKey, KeyService, type Limits } from './service.ts';
