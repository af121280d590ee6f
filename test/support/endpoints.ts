import { desc, eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { brands, reviews } from '../../db/schema';
import type { createCaller } from '../../routers';

type Caller = ReturnType<typeof createCaller>;

/**
 * Every endpoint of the API, as both doors reach it: the REST path and the procedure call. The shared
 * auth-and-tenancy suite runs against each; an endpoint added to the router is added here.
 * `brand` is the brand_code to read; `ownUser` a user of that brand where the path needs one.
 */
export type Endpoint = {
  name: string;
  brandScoped: boolean;
  path(brand: string): string;
  call(caller: Caller, brand: string): Promise<unknown>;
};

export const DEMO_BRAND = 'chicken-house';
export const DEMO_USER = 'u-ch-001';

/** A user of each brand the suite reads, for paths that name one. */
const USER_OF: Record<string, string> = {
  'chicken-house': DEMO_USER,
  'burger-town': 'u-bt-001',
  'noodle-bar': 'u-nb-001',
};
const userOf = (brand: string) => USER_OF[brand] ?? DEMO_USER;

/** The newest review of each brand, for paths that name one; filled by loadSamples before the suite. */
const REVIEW_OF: Record<string, string> = {};
const reviewOf = (brand: string) => REVIEW_OF[brand] ?? 'R000000000';

export async function loadSamples(db: Db) {
  const rows = await db
    .selectDistinctOn([brands.brandCode], { brand: brands.brandCode, review: reviews.reviewCode })
    .from(reviews)
    .innerJoin(brands, eq(brands.id, reviews.brandId))
    .orderBy(brands.brandCode, desc(reviews.writtenAt), desc(reviews.reviewCode));
  for (const row of rows) REVIEW_OF[row.brand] = row.review;
}

export const ENDPOINTS: Endpoint[] = [
  {
    name: 'brands.list',
    brandScoped: false,
    path: () => '/partner/v1/brands',
    call: (caller) => caller.brands.list({}),
  },
  {
    name: 'users.list',
    brandScoped: true,
    path: (brand) => `/partner/v1/brands/${brand}/users`,
    call: (caller, brand) => caller.users.list({ brand_code: brand }),
  },
  {
    name: 'users.get',
    brandScoped: true,
    path: (brand) => `/partner/v1/brands/${brand}/users/${userOf(brand)}`,
    call: (caller, brand) => caller.users.get({ brand_code: brand, user_code: userOf(brand) }),
  },
  {
    name: 'shops.list',
    brandScoped: true,
    path: (brand) => `/partner/v1/brands/${brand}/shops`,
    call: (caller, brand) => caller.shops.list({ brand_code: brand }),
  },
  {
    name: 'reviews.list',
    brandScoped: true,
    path: (brand) => `/partner/v1/brands/${brand}/reviews`,
    call: (caller, brand) => caller.reviews.list({ brand_code: brand }),
  },
  {
    name: 'reviews.get',
    brandScoped: true,
    path: (brand) => `/partner/v1/brands/${brand}/reviews/${reviewOf(brand)}`,
    call: (caller, brand) => caller.reviews.get({ brand_code: brand, review_id: reviewOf(brand) }),
  },
  {
    name: 'reviewStats.list',
    brandScoped: true,
    path: (brand) => `/partner/v1/brands/${brand}/review-stats`,
    call: (caller, brand) => caller.reviewStats.list({ brand_code: brand }),
  },
  {
    name: 'sales.list',
    brandScoped: true,
    path: (brand) => `/partner/v1/brands/${brand}/sales`,
    call: (caller, brand) => caller.sales.list({ brand_code: brand }),
  },
];
