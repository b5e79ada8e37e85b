import { z } from 'zod';

/**
 * One SERP task as posted to `task_post` or a live endpoint. Rules are the spec's
 * (events task table, which is the one the interface spells out for SERP tasks):
 * keyword up to 700 characters, one of three location fields, depth up to 700,
 * tag up to 255, device/OS pairs of the v3 notes.
 */
export const serpTaskSchema = z
  .object({
    keyword: z.string().min(1, 'must not be empty').max(700, 'at most 700 characters'),
    location_code: z.number().int().positive().optional(),
    location_name: z.string().min(1).optional(),
    location_coordinate: z
      .string()
      .regex(
        /^-?\d{1,3}(\.\d{1,7})?,-?\d{1,3}(\.\d{1,7})?,\d+(\.\d+)?$/,
        'latitude,longitude,radius with up to 7 decimals',
      )
      .optional(),
    language_code: z.string().min(2).optional(),
    language_name: z.string().min(1).optional(),
    device: z.enum(['desktop', 'mobile']).optional(),
    os: z.enum(['windows', 'macos', 'android', 'ios']).optional(),
    depth: z.number().int().min(1).max(700, 'at most 700').optional(),
    priority: z.union([z.literal(1), z.literal(2)]).optional(),
    se_domain: z.string().optional(),
    tag: z.string().max(255, 'at most 255 characters').optional(),
    pingback_url: z.string().url().optional(),
    postback_url: z.string().url().optional(),
    postback_data: z.enum(['regular', 'advanced', 'html']).optional(),
  })
  .strict()
  .superRefine((t, ctx) => {
    if (t.location_code === undefined && t.location_name === undefined && t.location_coordinate === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['location_code'],
        message: 'one of location_code, location_name or location_coordinate is required',
      });
    }
    if (t.postback_url !== undefined && t.postback_data === undefined) {
      ctx.addIssue({ code: 'custom', path: ['postback_data'], message: 'required with postback_url' });
    }
    if (t.os !== undefined && t.device !== undefined) {
      const ok = t.device === 'desktop' ? ['windows', 'macos'] : ['android', 'ios'];
      if (!ok.includes(t.os)) {
        ctx.addIssue({ code: 'custom', path: ['os'], message: `${t.device} takes os ${ok.join(' or ')}` });
      }
    }
    if (t.location_coordinate !== undefined) {
      const radius = Number(t.location_coordinate.split(',')[2]);
      if (!(radius >= 199.9 && radius <= 199999)) {
        ctx.addIssue({ code: 'custom', path: ['location_coordinate'], message: 'radius between 199.9 and 199999' });
      }
    }
  });

export type SerpTask = z.infer<typeof serpTaskSchema>;
