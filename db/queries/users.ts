import { and, asc, eq, inArray } from 'drizzle-orm';
import type { Db } from '../client';
import { kstTimestamp } from '../kst';
import { brandUsers, platformAccounts } from '../schema';
import { PUBLIC_CODE } from '../schema/columns';
import type { BrandScope } from './brands';
import { literalLimit, type PageRequest, paginate } from './pagination';

const userColumns = {
  id: brandUsers.id,
  user_code: brandUsers.userCode,
  display_name: brandUsers.displayName,
  createdAt: brandUsers.createdAt,
};

/** Users of a brand, by registration time then code (D-9), each with its platform accounts. */
export function listUsers(db: Db, brand: BrandScope, page: PageRequest) {
  return paginate(async ({ limit, offset }) => {
    const rows = await db
      .select(userColumns)
      .from(brandUsers)
      .where(eq(brandUsers.brandId, brand.id))
      .orderBy(asc(brandUsers.createdAt), asc(brandUsers.userCode))
      .limit(literalLimit(limit))
      .offset(offset);
    return withPlatformAccounts(db, rows);
  }, page);
}

export async function findUser(db: Db, brand: BrandScope, userCode: string) {
  if (!PUBLIC_CODE.test(userCode)) return undefined;
  const rows = await db
    .select(userColumns)
    .from(brandUsers)
    .where(and(eq(brandUsers.brandId, brand.id), eq(brandUsers.userCode, userCode)))
    .limit(1);
  const [user] = await withPlatformAccounts(db, rows);
  return user;
}

async function withPlatformAccounts<User extends { id: number; createdAt: Date }>(db: Db, users: User[]) {
  const ids = users.map((user) => user.id);
  const { userId, platform, status } = platformAccounts;
  const accounts = ids.length
    ? await db
        .select({ userId, platform, status })
        .from(platformAccounts)
        .where(inArray(userId, ids))
        .orderBy(asc(userId), asc(platform))
    : [];
  return users.map(({ id, createdAt, ...user }) => ({
    ...user,
    platform_accounts: accounts
      .filter((account) => account.userId === id)
      .map(({ platform, status }) => ({ platform, status })),
    created_at: kstTimestamp(createdAt),
  }));
}
