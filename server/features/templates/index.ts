/** The templates feature's public face. */
export { type TemplateRow, TemplatesRepo } from './repo.ts';
export { templateRoutes } from './routes.ts';
export { TemplateService } from './service.ts';
