import { timestamp } from 'drizzle-orm/pg-core';

/** Shared column set: every row knows when it was created. Timestamps are instants (timestamptz). */
export const createdAt = {
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
};

export const instant = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });
