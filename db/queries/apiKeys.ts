import { eq } from 'drizzle-orm';
import type { Db } from '../client';
import { apiKeys, partners } from '../schema';

/** The key row and its partner's state, found by the key's SHA-256 (D-4): all the auth check needs. */
export async function findApiKeyByHash(db: Db, keyHash: string) {
  const [row] = await db
    .select({
      keyId: apiKeys.id,
      partnerId: apiKeys.partnerId,
      revokedAt: apiKeys.revokedAt,
      expiresAt: apiKeys.expiresAt,
      partnerActive: partners.isActive,
    })
    .from(apiKeys)
    .innerJoin(partners, eq(partners.id, apiKeys.partnerId))
    .where(eq(apiKeys.keyHash, keyHash))
    .limit(1);
  return row;
}
