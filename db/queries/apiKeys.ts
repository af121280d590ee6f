import { asc, eq, sql } from 'drizzle-orm';
import type { Db } from '../client';
import { apiKeys, partners } from '../schema';

const keyState = {
  keyHash: apiKeys.keyHash,
  keyId: apiKeys.id,
  /** What logs show of the key (D-4, D-22). */
  displayPrefix: apiKeys.displayPrefix,
  partnerId: apiKeys.partnerId,
  revokedAt: apiKeys.revokedAt,
  expiresAt: apiKeys.expiresAt,
  partnerActive: partners.isActive,
};

/** Every key with its partner's state, by SHA-256 (D-4): all the auth check needs, for the key directory. */
export function loadApiKeyStates(db: Db) {
  return db.select(keyState).from(apiKeys).innerJoin(partners, eq(partners.id, apiKeys.partnerId));
}

export type ApiKeyState = Awaited<ReturnType<typeof loadApiKeyStates>>[number];

// Key administration (D-4), for the keys CLI. The plain key exists only in the caller's hands.

export async function findPartnerByName(db: Db, name: string) {
  const [partner] = await db
    .select({ id: partners.id, name: partners.name })
    .from(partners)
    .where(eq(partners.name, name));
  return partner;
}

export async function insertApiKey(
  db: Db,
  key: {
    partnerId: number;
    keyHash: string;
    displayPrefix: string;
    label?: string | undefined;
    expiresAt?: Date | undefined;
  },
) {
  const [row] = await db.insert(apiKeys).values(key).returning({ id: apiKeys.id });
  return row;
}

export function listApiKeys(db: Db) {
  return db
    .select({
      id: apiKeys.id,
      partner: partners.name,
      prefix: apiKeys.displayPrefix,
      label: apiKeys.label,
      createdAt: apiKeys.createdAt,
      revokedAt: apiKeys.revokedAt,
      expiresAt: apiKeys.expiresAt,
    })
    .from(apiKeys)
    .innerJoin(partners, eq(partners.id, apiKeys.partnerId))
    .orderBy(asc(partners.name), asc(apiKeys.id));
}

/** Revokes a key now; revoking twice keeps the first time. Returns false when there is no such key. */
export async function revokeApiKey(db: Db, id: number, at: Date) {
  const rows = await db
    .update(apiKeys)
    .set({ revokedAt: sql`coalesce(${apiKeys.revokedAt}, ${at.toISOString()}::timestamptz)` })
    .where(eq(apiKeys.id, id))
    .returning({ id: apiKeys.id });
  return rows.length > 0;
}

/** Sets (or with null clears) a key's expiry. Returns false when there is no such key. */
export async function setApiKeyExpiry(db: Db, id: number, expiresAt: Date | null) {
  const rows = await db.update(apiKeys).set({ expiresAt }).where(eq(apiKeys.id, id)).returning({ id: apiKeys.id });
  return rows.length > 0;
}
