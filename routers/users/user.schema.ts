import { z } from 'zod';
import { accountStatusSchema, kstTimestampSchema, platformSchema } from '../shared/values';

/** A user (partner guide § List users of a brand). The list and the single read share it. */
export const userSchema = z
  .object({
    user_code: z.string().describe('User identifier, used in the single-user path.'),
    display_name: z.string().describe('Display name (branch name).'),
    platform_accounts: z
      .array(
        z.object({
          platform: platformSchema,
          status: accountStatusSchema.describe(
            'ACTIVE: linked, the platform has an active shop; INACTIVE: linked, no active shop; ERROR: link error, collection stopped; LINKING: link in progress.',
          ),
        }),
      )
      .describe('Platform accounts the user linked.'),
    created_at: kstTimestampSchema.describe('Time registered in the brand (KST).'),
  })
  .meta({ id: 'User' });
