import { z } from 'zod';

export const GeoConditions = z
  .strictObject({
    countries: z
      .array(z.string().regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 code such as FR'))
      .min(1, 'must list at least one country')
      .max(250),
  })
  .meta({ id: 'GeoConditions' });
export type GeoConditionsT = z.infer<typeof GeoConditions>;
