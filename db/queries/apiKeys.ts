import { asc, countDistinct, eq, sql } from 'drizzle-orm';
import type { Db } from '../client';
import { apiKeys, brands, partners } from '../schema';

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

/** The keys of these SHA-256 hashes (D-4) with their partner's state: all the auth check needs, for the key cache. */
export function findApiKeyStates(db: Db, keyHashes: readonly string[]) {
  // One statement text whatever the count (one prepared statement); bpchar[] so the unique index serves it.
  return db
    .select(keyState)
    .from(apiKeys)
    .innerJoin(partners, eq(partners.id, apiKeys.partnerId))
    .where(sql`${apiKeys.keyHash} = ANY(string_to_array(${keyHashes.join(',')}, ',')::bpchar[])`);
}

export type ApiKeyState = Awaited<ReturnType<typeof findApiKeyStates>>[number];

// Key administration (D-4), for the keys CLI. The plain key exists only in the caller's hands.

export async function findPartnerByName(db: Db, name: string) {
  const [partner] = await db
    .select({ id: partners.id, name: partners.name })
    .from(partners)
    .where(eq(partners.name, name));
  return partner;
}

/** The new key's row, or undefined when a key with the same hash exists. */
export async function insertApiKey(
  db: Db,
  key: Pick<typeof apiKeys.$inferInsert, 'partnerId' | 'keyHash' | 'displayPrefix' | 'label' | 'expiresAt'>,
) {
  const [row] = await db
    .insert(apiKeys)
    .values(key)
    .onConflictDoNothing({ target: apiKeys.keyHash })
    .returning({ id: apiKeys.id });
  return row;
}

export function listApiKeys(db: Db) {
  return db
    .select({
      id: apiKeys.id,
      partner: partners.name,
      partnerActive: partners.isActive,
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

// Partner and brand administration, for the partners and brands CLIs.

/** The new partner, or undefined when one has that name. */
export async function createPartner(db: Db, name: string) {
  const [row] = await db
    .insert(partners)
    .values({ name })
    .onConflictDoNothing({ target: partners.name })
    .returning({ id: partners.id, name: partners.name });
  return row;
}

export function listPartners(db: Db) {
  return db
    .select({
      id: partners.id,
      name: partners.name,
      active: partners.isActive,
      brands: countDistinct(brands.id),
      keys: countDistinct(apiKeys.id),
    })
    .from(partners)
    .leftJoin(brands, eq(brands.partnerId, partners.id))
    .leftJoin(apiKeys, eq(apiKeys.partnerId, partners.id))
    .groupBy(partners.id)
    .orderBy(asc(partners.name));
}

/** Activates or deactivates a partner (D-13: a deactivated partner's keys answer 403). False: no such partner. */
export async function setPartnerActive(db: Db, name: string, active: boolean) {
  const rows = await db
    .update(partners)
    .set({ isActive: active })
    .where(eq(partners.name, name))
    .returning({ id: partners.id });
  return rows.length > 0;
}

/** The new brand, or undefined when a brand (of any partner) has that code. */
export async function createBrand(db: Db, brand: { partnerId: number; brandCode: string; displayName: string }) {
  const [row] = await db
    .insert(brands)
    .values(brand)
    .onConflictDoNothing({ target: brands.brandCode })
    .returning({ id: brands.id, brandCode: brands.brandCode });
  return row;
}

export function listBrands(db: Db) {
  return db
    .select({ code: brands.brandCode, name: brands.displayName, partner: partners.name })
    .from(brands)
    .innerJoin(partners, eq(partners.id, brands.partnerId))
    .orderBy(asc(partners.name), asc(brands.brandCode));
}
