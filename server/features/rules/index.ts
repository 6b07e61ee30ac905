/** The rules feature's public face. */
export { type RuleRow, RulesRepo } from './repo.ts';
export { ruleRoutes } from './routes.ts';
export { type RuleInput, RuleService } from './service.ts';
