import { z } from 'zod';

export const SplitConditions = z
  .strictObject({
    weight: z.number().int('must be a whole number').min(1, 'must be 1 to 100').max(100, 'must be 1 to 100'),
  })
  .meta({ id: 'SplitConditions' });
export type SplitConditionsT = z.infer<typeof SplitConditions>;
