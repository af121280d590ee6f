import { sql } from 'drizzle-orm';
import { boolean, char, check, index, integer, pgTable, serial, text } from 'drizzle-orm/pg-core';
import { createdAt, instant } from './columns';

export const partners = pgTable('partners', {
  id: serial('id').primaryKey(),
  name: text('name').notNull().unique(),
  /** false = partner deactivated: every key of it answers 403 PARTNER_API_FORBIDDEN (D-13). */
  isActive: boolean('is_active').notNull().default(true),
  ...createdAt,
});

/** D-4: a key is stored as its SHA-256 (hex) and a short display prefix, never in plain text. */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: serial('id').primaryKey(),
    partnerId: integer('partner_id')
      .notNull()
      .references(() => partners.id),
    keyHash: char('key_hash', { length: 64 }).notNull().unique(),
    displayPrefix: text('display_prefix').notNull(),
    label: text('label'),
    revokedAt: instant('revoked_at'),
    expiresAt: instant('expires_at'),
    ...createdAt,
  },
  (t) => [
    index('api_keys_partner_idx').on(t.partnerId),
    check('api_keys_hash_hex', sql`${t.keyHash} ~ '^[0-9a-f]{64}$'`),
  ],
);
