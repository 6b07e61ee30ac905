import { defineRuleType, eachRule } from '../define.ts';
import { GeoConditions } from './schema.ts';

/** The scan's country is listed; an unknown country matches no geo rule. */
export const geoBased = defineRuleType({
  conditions: GeoConditions,
  compile: eachRule((c, ctx) => ctx.country !== null && c.countries.includes(ctx.country)),
});
