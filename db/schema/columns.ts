import { timestamp } from 'drizzle-orm/pg-core';

/** Shared column set: every row knows when it was created. Timestamps are instants (timestamptz). */
export const createdAt = {
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
};

export const instant = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * Every public code in a path: URL-safe, as the tables' CHECK constraints say. Lookups test it first, so no
 * malformed value (a NUL byte, say) reaches the database: it is simply not found.
 */
export const PUBLIC_CODE = /^[A-Za-z0-9_-]{1,64}$/;
