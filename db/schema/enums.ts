import { pgEnum } from 'drizzle-orm/pg-core';

// Value sets of the partner guide's endpoints. The API exposes them verbatim, so the database enums are the source the
// zod schemas are built from (routers/shared/values.ts).
export const platformEnum = pgEnum('platform', ['BAEMIN', 'CPEATS', 'YOGIYO', 'DDANGYO', 'NAVER', 'MUKKEBI']);
export const accountStatusEnum = pgEnum('account_status', ['ACTIVE', 'INACTIVE', 'ERROR', 'LINKING']);
export const shopStatusEnum = pgEnum('shop_status', ['ACTIVE', 'INACTIVE', 'FAILED']);
export const managerRoleEnum = pgEnum('manager_role', ['OWNER', 'MANAGER', 'SUPERVISOR']);

/**
 * What happened to a review's reply, as collected. D-7: POSTED (through us) and
 * OWNER_DIRECT (written by the owner on the platform) are REPLIED; SCHEDULED and FAILED are NOT_REPLIED.
 */
export const replyStateEnum = pgEnum('reply_state', ['NONE', 'POSTED', 'OWNER_DIRECT', 'SCHEDULED', 'FAILED']);

/** Sales are collected only on these platforms (partner guide § Sales). */
export const SALES_PLATFORMS = ['BAEMIN', 'CPEATS', 'YOGIYO'] as const;
