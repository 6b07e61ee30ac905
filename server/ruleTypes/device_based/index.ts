import { defineRuleType, eachRule, type ScanContext } from '../define.ts';
import { DeviceConditions, type DeviceConditionsT } from './schema.ts';

/** Devices and OS: when both are given both must match; unknown devices match nothing. */
export function matchesDevice(c: DeviceConditionsT, ctx: ScanContext): boolean {
  if (!c.devices && !c.os) return false;
  if (c.devices && !(c.devices as readonly string[]).includes(ctx.device_type)) return false;
  if (c.os && !(c.os as readonly string[]).includes(ctx.os)) return false;
  return true;
}

export const deviceBased = defineRuleType({
  conditions: DeviceConditions,
  compile: eachRule(matchesDevice),
});
