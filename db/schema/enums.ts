import { pgEnum } from 'drizzle-orm/pg-core';

// The partner guide's value sets, exposed verbatim: the zod schemas are built from these (routers/shared/values.ts).
export const platformEnum = pgEnum('platform', ['BAEMIN', 'CPEATS', 'YOGIYO', 'DDANGYO', 'NAVER', 'MUKKEBI']);
export const accountStatusEnum = pgEnum('account_status', ['ACTIVE', 'INACTIVE', 'ERROR', 'LINKING']);
export const shopStatusEnum = pgEnum('shop_status', ['ACTIVE', 'INACTIVE', 'FAILED']);
export const managerRoleEnum = pgEnum('manager_role', ['OWNER', 'MANAGER', 'SUPERVISOR']);

/** A reply's state as collected. D-7: POSTED and OWNER_DIRECT are REPLIED; SCHEDULED and FAILED are not. */
export const replyStateEnum = pgEnum('reply_state', ['NONE', 'POSTED', 'OWNER_DIRECT', 'SCHEDULED', 'FAILED']);

/** Sales are collected only on these platforms (partner guide § Sales). */
export const SALES_PLATFORMS = ['BAEMIN', 'CPEATS', 'YOGIYO'] as const;
