import { sql } from 'drizzle-orm';
import { bigint, check, date, pgTable, primaryKey } from 'drizzle-orm/pg-core';
import { createdAt } from './columns';
import { shopRef } from './shops';

export const salesSnapshots = pgTable(
  'sales_snapshots',
  {
    shopId: shopRef(),
    day: date('day', { mode: 'string' }).notNull(),
    amount: bigint('amount', { mode: 'number' }).notNull(),
    ...createdAt,
  },
  (t) => [primaryKey({ columns: [t.shopId, t.day] }), check('sales_snapshots_amount', sql`${t.amount} >= 0`)],
);
