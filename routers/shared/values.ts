import { z } from 'zod';
import {
  accountStatusEnum,
  managerRoleEnum,
  platformEnum,
  SALES_PLATFORMS,
  shopStatusEnum,
} from '../../db/schema/enums';

// Output value sets and formats, built from the database enums so the two never drift (partner guide § Endpoints).

export const platformSchema = z
  .enum(platformEnum.enumValues)
  .meta({ id: 'Platform', description: 'A delivery or place-listing platform.' });
export const salesPlatformSchema = z
  .enum(SALES_PLATFORMS)
  .meta({ id: 'SalesPlatform', description: 'A platform whose sales are collected: BAEMIN, CPEATS or YOGIYO.' });
export const accountStatusSchema = z.enum(accountStatusEnum.enumValues);
export const shopStatusSchema = z.enum(shopStatusEnum.enumValues);
export const managerRoleSchema = z.enum(managerRoleEnum.enumValues);

/** A KST timestamp, `YYYY-MM-DDTHH:mm:ss+09:00` (D-5). */
export const kstTimestampSchema = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+09:00$/)
  .meta({ example: '2026-11-21T14:03:00+09:00' });

/** A KST day, `YYYY-MM-DD` (D-5). */
export const kstDaySchema = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/)
  .meta({ example: '2026-11-21' });
