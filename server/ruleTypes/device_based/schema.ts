import { z } from 'zod';
import { oneOf } from '../../schemas/common.ts';

export const DEVICES = ['mobile', 'tablet', 'desktop'] as const;
export const OPERATING_SYSTEMS = ['ios', 'android', 'windows', 'macos', 'linux'] as const;

export const DeviceConditions = z
  .strictObject({
    devices: z.array(oneOf(DEVICES)).min(1).optional(),
    os: z.array(oneOf(OPERATING_SYSTEMS)).min(1).optional(),
  })
  .refine((c) => c.devices !== undefined || c.os !== undefined, 'must set devices or os')
  .meta({ id: 'DeviceConditions', anyOf: [{ required: ['devices'] }, { required: ['os'] }] });
export type DeviceConditionsT = z.infer<typeof DeviceConditions>;
