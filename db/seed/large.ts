// Benchmark data (D-3 "--reviews N"): one extra brand `bench-brand` under Demo Foods, so the active demo key
// reads it, with ~100 shops on every platform, a year of sales and N reviews over the last 365 days. Rows are
// generated chunk by chunk and streamed (COPY on PostgreSQL, db/seed/bulk.ts), so memory stays flat whatever
// N is; statistics are refreshed afterwards.
import { eq, sql } from 'drizzle-orm';
import type { Db } from '../client';
import { addDays, kstDayStart, kstToday } from '../kst';
import {
  alertNumbers,
  brands,
  brandUsers,
  type managerRoleEnum,
  managers,
  partners,
  platformAccounts,
  reviews,
  SALES_PLATFORMS,
  salesSnapshots,
  shopAlertNumbers,
  shopManagers,
  type shopStatusEnum,
  shops,
} from '../schema';
import { inBulkTransaction, refreshStatistics } from './bulk';
import {
  addMs,
  DAY_MS,
  floorToSecond,
  generateReviewBody,
  type NewReview,
  notAfter,
  type Platform,
  salesAmount,
  type Vocabulary,
} from './content';
import { STOPPED_DAYS_AGO } from './demo';
import { createRandom, DEFAULT_SEED, hashString, type Random } from './random';

export const BENCH_BRAND_CODE = 'bench-brand';
const OWNER_PARTNER = 'Demo Foods';
const SHOP_COUNT = 100;
const HISTORY_DAYS = 365;
const CHUNK_ROWS = 2000;

type ShopStatus = (typeof shopStatusEnum.enumValues)[number];
type ManagerRole = (typeof managerRoleEnum.enumValues)[number];

const PLATFORMS: readonly Platform[] = ['BAEMIN', 'CPEATS', 'YOGIYO', 'DDANGYO', 'NAVER', 'MUKKEBI'];

const BRANCHES = [
  '강남',
  '서초',
  '송파',
  '강동',
  '마포',
  '용산',
  '성동',
  '광진',
  '동대문',
  '중랑',
  '성북',
  '강북',
  '도봉',
  '노원',
  '은평',
  '서대문',
  '종로',
  '명동',
  '영등포',
  '동작',
  '관악',
  '금천',
  '구로',
  '양천',
  '강서',
  '수원',
  '성남',
  '고양',
  '용인',
  '부천',
  '안산',
  '안양',
  '남양주',
  '화성',
  '평택',
  '의정부',
  '시흥',
  '파주',
  '김포',
  '광명',
] as const;

const VOCABULARY: Vocabulary = {
  food: '치킨',
  menus: ['후라이드치킨', '양념치킨', '간장치킨', '마라치킨', '반반치킨', '치즈볼', '감자튀김', '콜라 1.25L', '닭강정'],
};

const CATEGORIES: Record<Platform, string> = {
  BAEMIN: '치킨',
  CPEATS: '치킨',
  YOGIYO: '치킨·닭강정',
  DDANGYO: '치킨',
  NAVER: '치킨,닭강정',
  MUKKEBI: '치킨/찜닭',
};

/** Platform-looking ids, unique per platform by construction (prefixes differ from the demo shops'). */
function benchPlatformShopId(platform: Platform, index: number): string {
  const n = String(index).padStart(4, '0');
  switch (platform) {
    case 'BAEMIN':
      return `1900${n}`;
    case 'CPEATS':
      return `88${n}`;
    case 'YOGIYO':
      return `199${n}`;
    case 'DDANGYO':
      return `203990${n}`;
    case 'NAVER':
      return `199000${n}`;
    case 'MUKKEBI':
      return `MK9${n}`;
  }
}

/** `B` + 10 digits: fixed width like the demo's `R…` codes, so text order is age order within the brand. */
export function benchReviewCode(sequence: number): string {
  return `B${String(sequence).padStart(10, '0')}`;
}

type BenchShop = { id: number; status: ShopStatus; weight: number; alertable: boolean };

/** Cumulative weights for O(log n) weighted picks among many shops. */
class WeightedPicker<T> {
  readonly #items: readonly T[];
  readonly #cumulative: number[] = [];

  constructor(entries: readonly (readonly [item: T, weight: number])[]) {
    if (entries.length === 0) throw new Error('no items to pick from');
    this.#items = entries.map(([item]) => item);
    let total = 0;
    for (const [, weight] of entries) {
      total += weight;
      this.#cumulative.push(total);
    }
  }

  pick(rand: Random): T {
    const roll = rand.next() * (this.#cumulative.at(-1) ?? 0);
    let low = 0;
    let high = this.#cumulative.length - 1;
    while (low < high) {
      const mid = (low + high) >> 1;
      if ((this.#cumulative[mid] ?? 0) > roll) high = mid;
      else low = mid + 1;
    }
    return this.#items[low] as T;
  }
}

/** The most reviews one bench brand holds; a larger set is spread over more brands of that size. */
export const REVIEWS_PER_BRAND = 1_000_000;
/** Owner of the bench brands after the first: a partner of their own, so Demo Foods' key sees one brand. */
const OTHER_PARTNER = 'Bench Foods';

/** The code of the `index`-th bench brand (0-based): the first is BENCH_BRAND_CODE. */
export function benchBrandCode(index: number): string {
  return index === 0 ? BENCH_BRAND_CODE : `${BENCH_BRAND_CODE}-${index + 1}`;
}

/** How many reviews each bench brand gets: REVIEWS_PER_BRAND each, the rest in the last one. */
export function benchBrandSizes(total: number, perBrand = REVIEWS_PER_BRAND): number[] {
  const count = Math.max(1, Math.ceil(total / perBrand));
  return Array.from({ length: count }, (_, index) => Math.min(perBrand, Math.max(0, total - index * perBrand)));
}

/** One bench brand's rows besides its reviews and sales, and what their generators need. */
type SeededBrand = {
  brandId: number;
  rand: Random;
  shopValues: (typeof shops.$inferInsert)[];
  benchShops: BenchShop[];
  /** Sequence of its first review: codes are global, and in age order within the brand. */
  firstSequence: number;
  reviews: number;
};

/**
 * N reviews over ceil(N / REVIEWS_PER_BRAND) brands: `bench-brand` under Demo Foods (the one the bench
 * reads), the others under Bench Foods, so a larger database grows beside the brand read, as a platform
 * grows by brands. One COPY per table for every brand, so the indexes are built once.
 */
export async function seedLarge(
  db: Db,
  options: {
    reviews: number;
    /** At most this many reviews per brand; REVIEWS_PER_BRAND unless a test wants several small brands. */
    reviewsPerBrand?: number;
    now?: Date;
    seed?: number;
    onProgress?: (done: number, total: number) => void;
  },
): Promise<{ brandCode: string; brands: number; shops: number; reviews: number }> {
  const total = options.reviews;
  if (!Number.isInteger(total) || total < 0)
    throw new Error(`seedLarge: reviews must be a whole number ≥ 0, got ${total}`);
  const now = options.now ?? new Date();
  const today = kstToday(now);
  const sizes = benchBrandSizes(total, options.reviewsPerBrand);

  const result = await inBulkTransaction(db, async (tx, write) => {
    const [partner] = await tx.select({ id: partners.id }).from(partners).where(eq(partners.name, OWNER_PARTNER));
    if (!partner) throw new Error(`seedLarge: partner "${OWNER_PARTNER}" not found; run the demo seed first`);
    const [existing] = await tx.select({ id: brands.id }).from(brands).where(eq(brands.brandCode, BENCH_BRAND_CODE));
    if (existing) throw new Error(`seedLarge: brand ${BENCH_BRAND_CODE} already exists`);
    let otherPartnerId: number | undefined;
    if (sizes.length > 1) {
      const [other] = await tx
        .insert(partners)
        .values({ name: OTHER_PARTNER, createdAt: kstDayStart(addDays(today, -400)) })
        .returning({ id: partners.id });
      otherPartnerId = other?.id;
    }

    const seeded: SeededBrand[] = [];
    let firstSequence = 1;
    for (const [index, size] of sizes.entries()) {
      const partnerId = index === 0 ? partner.id : otherPartnerId;
      if (partnerId === undefined) throw new Error('seedLarge: partner not inserted');
      seeded.push(await seedBrand(tx, { index, partnerId, today, seed: options.seed, firstSequence, reviews: size }));
      firstSequence += size;
    }

    // Reviews in written order per brand: review i of a brand sits in the i-th of its N equal slices of the
    // year, so times never decrease (codes stay in age order), never pass `now`, and no list of N rows is
    // ever held. Shops that are not ACTIVE only get reviews from before they stopped being collected.
    const historyStart = kstDayStart(addDays(today, -HISTORY_DAYS));
    const stoppedAt = kstDayStart(addDays(today, -STOPPED_DAYS_AGO));
    const spanMs = now.getTime() - historyStart.getTime();
    const criticalRange = [1, 2] as const;
    let written = 0;
    function* reviewChunks() {
      for (const brand of seeded) {
        const everyShop = new WeightedPicker(brand.benchShops.map((shop) => [shop, shop.weight] as const));
        const activeShops = new WeightedPicker(
          brand.benchShops.filter((shop) => shop.status === 'ACTIVE').map((shop) => [shop, shop.weight] as const),
        );
        const count = brand.reviews;
        for (let start = 0; start < count; start += CHUNK_ROWS) {
          const chunkRand = brand.rand.derive(hashString('reviews'), start / CHUNK_ROWS);
          const end = Math.min(count, start + CHUNK_ROWS);
          const rows: NewReview[] = [];
          for (let i = start; i < end; i++) {
            const writtenAt = floorToSecond(
              new Date(historyStart.getTime() + ((i + chunkRand.next()) / count) * spanMs),
            );
            const shop = (writtenAt < stoppedAt ? everyShop : activeShops).pick(chunkRand);
            rows.push({
              reviewCode: benchReviewCode(brand.firstSequence + i),
              brandId: brand.brandId,
              shopId: shop.id,
              writtenAt,
              ...generateReviewBody(chunkRand, {
                writtenAt,
                now,
                vocabulary: VOCABULARY,
                criticalRange,
                alertable: shop.alertable,
              }),
            });
          }
          yield rows;
          written += end - start;
          options.onProgress?.(written, total);
        }
      }
    }
    await write(reviews, reviewChunks());

    // A year of daily sales snapshots for the shops on sales platforms, one chunk per shop.
    const salesPlatforms: readonly Platform[] = SALES_PLATFORMS;
    function* salesChunks() {
      for (const brand of seeded) {
        for (const [index, value] of brand.shopValues.entries()) {
          const shop = brand.benchShops[index];
          if (!shop || !salesPlatforms.includes(value.platform)) continue;
          const salesRand = brand.rand.derive(hashString('sales'), index);
          const base = salesRand.int(200, 1500) * 1000;
          const lastDaysAgo = shop.status === 'ACTIVE' ? 0 : STOPPED_DAYS_AGO + 1;
          const snapshots: (typeof salesSnapshots.$inferInsert)[] = [];
          for (let daysAgo = HISTORY_DAYS; daysAgo >= lastDaysAgo; daysAgo--) {
            const day = addDays(today, -daysAgo);
            snapshots.push({
              shopId: shop.id,
              day,
              amount: salesAmount(salesRand.derive(daysAgo), base, day),
              createdAt: notAfter(addMs(kstDayStart(day), 23.5 * 3_600_000), now),
            });
          }
          yield snapshots;
        }
      }
    }
    await write(salesSnapshots, salesChunks());
    // A walk of the change feed reads these reviews whole (D-26): their millions of change rows would only
    // wait for pruning. TRUNCATE also starts every walk of every brand again, as the reviews are new.
    await tx.execute(sql`TRUNCATE review_changes`);

    return {
      brandCode: BENCH_BRAND_CODE,
      brands: seeded.length,
      shops: seeded.reduce((sum, brand) => sum + brand.benchShops.length, 0),
      reviews: total,
    };
  });
  await refreshStatistics(db, [reviews, salesSnapshots, shops, brands, brandUsers, platformAccounts]);
  return result;
}

/** One bench brand with its users, shops, accounts, managers and alert numbers. */
async function seedBrand(
  tx: Db,
  options: { index: number; partnerId: number; today: string; seed?: number; firstSequence: number; reviews: number },
): Promise<SeededBrand> {
  const { index: brandIndex, partnerId, today } = options;
  const brandCode = benchBrandCode(brandIndex);
  const rand = createRandom(options.seed ?? DEFAULT_SEED).derive(hashString(brandCode));
  const displayName = brandIndex === 0 ? '벤치치킨' : `벤치치킨${brandIndex + 1}`;
  const historyStart = kstDayStart(addDays(today, -HISTORY_DAYS));

  // Created before its year of data, but after chicken-house (400 days ago), which stays the oldest brand
  // of Demo Foods.
  const [brand] = await tx
    .insert(brands)
    .values({
      partnerId,
      brandCode,
      displayName,
      criticalStarMin: 1,
      criticalStarMax: 2,
      createdAt: addMs(kstDayStart(addDays(today, -399)), 10 * 3_600_000 + brandIndex * 60_000),
    })
    .returning({ id: brands.id });
  if (!brand) throw new Error('seedLarge: brand not inserted');
  const brandId = brand.id;
  const userRows = await tx
    .insert(brandUsers)
    .values(
      BRANCHES.map((branch, index) => ({
        brandId,
        userCode: `u-bn-${String(index + 1).padStart(3, '0')}`,
        displayName: `${branch}점`,
        createdAt: addMs(historyStart, -30 * DAY_MS + index * 3_600_000),
      })),
    )
    .returning({ id: brandUsers.id });

  // Shop i belongs to user i mod 40 (users 0-19 get 3 shops, 20-39 get 2) on distinct platforms; the last
  // two shops have no user.
  const shopStatuses: ShopStatus[] = [];
  const shopValues = Array.from({ length: SHOP_COUNT }, (_, index) => {
    const userIndex = index % BRANCHES.length;
    const round = Math.floor(index / BRANCHES.length);
    const platform = PLATFORMS[(userIndex + 2 * round) % PLATFORMS.length] ?? 'BAEMIN';
    const status: ShopStatus =
      index === 0
        ? 'ACTIVE'
        : rand.weighted<ShopStatus>([
            ['ACTIVE', 85],
            ['INACTIVE', 10],
            ['FAILED', 5],
          ]);
    shopStatuses.push(status);
    const linkedAt = addMs(historyStart, -(10 - round) * DAY_MS);
    return {
      brandId,
      userId: index >= SHOP_COUNT - 2 ? null : (userRows[userIndex]?.id ?? null),
      platform,
      platformShopId: benchPlatformShopId(platform, index),
      name: `${displayName} ${BRANCHES[userIndex] ?? ''}${round > 0 ? ` ${round + 1}호` : ''}점`,
      categoryName: CATEGORIES[platform],
      status,
      linkedAt,
      createdAt: linkedAt,
    } satisfies typeof shops.$inferInsert;
  });
  const shopRows = await tx.insert(shops).values(shopValues).returning({ id: shops.id });

  // Accounts follow the shops: ACTIVE with an active shop, ERROR after a failed link, else INACTIVE.
  const accounts = new Map<string, typeof platformAccounts.$inferInsert>();
  for (const [index, value] of shopValues.entries()) {
    if (value.userId === null) continue;
    const key = `${value.userId}:${value.platform}`;
    const status = value.status === 'ACTIVE' ? 'ACTIVE' : value.status === 'FAILED' ? 'ERROR' : 'INACTIVE';
    const previous = accounts.get(key);
    if (!previous || status === 'ACTIVE') {
      accounts.set(key, {
        userId: value.userId,
        platform: value.platform,
        status,
        createdAt: shopValues[index]?.linkedAt,
      });
    }
  }
  await tx.insert(platformAccounts).values([...accounts.values()]);

  const roles: readonly (ManagerRole | null)[] = [
    'OWNER',
    'MANAGER',
    'MANAGER',
    'SUPERVISOR',
    'SUPERVISOR',
    null,
    'MANAGER',
    null,
  ];
  const managerRows = await tx
    .insert(managers)
    .values(
      roles.map((role, index) => ({
        brandId,
        displayName: `벤치관리자${index + 1}`,
        role,
        createdAt: addMs(historyStart, -25 * DAY_MS),
      })),
    )
    .returning({ id: managers.id });
  const numberRows = await tx
    .insert(alertNumbers)
    .values(
      Array.from({ length: 10 }, (_, index) => ({
        brandId,
        phoneNumber: `010-9${String(index).padStart(3, '0')}-${String(1000 + index * 37).padStart(4, '0')}`,
        // Every third number belongs to no administrator.
        managerId: index % 3 === 2 ? null : (managerRows[index % managerRows.length]?.id ?? null),
        verifiedAt: addMs(historyStart, -20 * DAY_MS),
        createdAt: addMs(historyStart, -20 * DAY_MS),
      })),
    )
    .returning({ id: alertNumbers.id });

  const assignments: (typeof shopManagers.$inferInsert)[] = [];
  const registrations: (typeof shopAlertNumbers.$inferInsert)[] = [];
  const benchShops: BenchShop[] = [];
  for (const [index, row] of shopRows.entries()) {
    const shopRand = rand.derive(hashString('shop'), index);
    for (const manager of shopRand.sample(managerRows, shopRand.int(0, 2))) {
      assignments.push({
        brandId,
        shopId: row.id,
        managerId: manager.id,
        createdAt: addMs(historyStart, -5 * DAY_MS),
      });
    }
    let alertable = false;
    for (const [slot, number] of shopRand
      .sample(
        numberRows,
        shopRand.weighted([
          [0, 4],
          [1, 3],
          [2, 2],
          [3, 1],
        ]),
      )
      .entries()) {
      const enabled = shopRand.chance(0.85);
      alertable ||= enabled;
      registrations.push({
        brandId,
        shopId: row.id,
        alertNumberId: number.id,
        slot: slot + 1,
        enabled,
        createdAt: addMs(historyStart, -5 * DAY_MS),
      });
    }
    benchShops.push({
      id: row.id,
      status: shopStatuses[index] ?? 'ACTIVE',
      weight: shopRand.float(0.3, 2),
      alertable,
    });
  }
  if (assignments.length > 0) await tx.insert(shopManagers).values(assignments);
  if (registrations.length > 0) await tx.insert(shopAlertNumbers).values(registrations);

  return { brandId, rand, shopValues, benchShops, firstSequence: options.firstSequence, reviews: options.reviews };
}
