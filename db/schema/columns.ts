import { timestamp } from 'drizzle-orm/pg-core';

/** Shared column set: every row knows when it was created. Timestamps are instants (timestamptz). */
export const createdAt = {
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
};

export const instant = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * The format of every public code in a path (brand_code, user_code, review_id): URL-safe, so it stands in
 * a path unencoded. The tables enforce it with CHECK constraints of the same pattern; lookups test it
 * first, so no malformed value (a NUL byte, say) ever reaches the database: it is simply not found.
 */
export const PUBLIC_CODE = /^[A-Za-z0-9_-]{1,64}$/;
