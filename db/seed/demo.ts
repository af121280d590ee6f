// The D-3 demo data set: three partners, their keys, five brands, and for Demo Foods' oldest brand
// `chicken-house` every value and edge case of the contract. Deterministic: the same `seed` and the same `now`
// give identical rows (ids included, on an empty database), and every date is relative to the KST "today"
// of `now`, so the data is always recent. The daily aggregate is not built here (db/aggregate.ts does it).
import { count, eq } from 'drizzle-orm';
import type { Db } from '../client';
import { displayPrefixOf, hashApiKey } from '../keys';
import { addDays, kstDay, kstDayStart, kstToday } from '../kst';
import {
  type accountStatusEnum,
  alertNumbers,
  apiKeys,
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
  webhookEndpoints,
} from '../schema';
import { sealSecret } from '../webhook-secrets';
import {
  addMs,
  atKst,
  type CriticalRange,
  DAY_MS,
  floorToSecond,
  generateReviewBody,
  insertRows,
  type NewReview,
  notAfter,
  orderSecondOfDay,
  type Platform,
  type ReplyState,
  replyFor,
  type Sentiment,
  salesAmount,
  type Vocabulary,
  weekdayFactor,
} from './content';
import { createRandom, DEFAULT_SEED, hashString, type Random } from './random';

export const DEMO_KEYS = {
  active: 'pk_test_demo_active',
  revoked: 'pk_test_demo_revoked',
  expired: 'pk_test_demo_expired',
  suspended: 'pk_test_suspended_active',
  other: 'pk_test_other_active',
} as const;

/**
 * The demo's webhook endpoint (D-28): Demo Foods' chicken-house, delivering to `npm run
 * demo:webhook-receiver`. Its secret is published (README) like the demo keys; the demo seals it with its
 * own WEBHOOK_SECRETS_KEY, used only when none is configured.
 */
export const DEMO_WEBHOOK = {
  id: 'wh_DemoFoodsChickenHouse',
  secret: 'whsec_Jyz1dDrNCrQ2f10lgEl+p7PvZrCn6Ijx',
  secretsKey: Buffer.from('IAwp9jw5jZSzzWEauBS9wAyvHVnZVpRuvK+kwqhSyPE=', 'base64'),
  url: 'http://127.0.0.1:4000/webhooks',
  brand: 'chicken-house',
} as const;

export type DemoSummary = {
  partners: number;
  brands: string[];
  shops: number;
  reviews: number;
  salesSnapshots: number;
};

type ShopStatus = (typeof shopStatusEnum.enumValues)[number];
type AccountStatus = (typeof accountStatusEnum.enumValues)[number];
type ManagerRole = (typeof managerRoleEnum.enumValues)[number];

/** Shops that are not ACTIVE stopped being collected this many days ago: no reviews or sales since. */
export const STOPPED_DAYS_AGO = 40;
/** Review and sales history of `chicken-house` starts this many days before today (D-3: at least 90). */
export const HISTORY_DAYS = 95;

// ---------------------------------------------------------------------------------------------------------
// The data set as data

type PartnerName = 'Demo Foods' | 'Other Eats' | 'Suspended Co';

const PARTNERS: readonly { name: PartnerName; isActive: boolean; createdDaysAgo: number }[] = [
  { name: 'Demo Foods', isActive: true, createdDaysAgo: 500 },
  { name: 'Other Eats', isActive: true, createdDaysAgo: 450 },
  { name: 'Suspended Co', isActive: false, createdDaysAgo: 420 },
];

type KeySpec = {
  key: string;
  partner: PartnerName;
  label: string;
  createdDaysAgo: number;
  revokedDaysAgo?: number;
  /** Negative: expires in the future. */
  expiresDaysAgo?: number;
};

const KEYS: readonly KeySpec[] = [
  { key: DEMO_KEYS.active, partner: 'Demo Foods', label: 'demo: active', createdDaysAgo: 400 },
  { key: DEMO_KEYS.revoked, partner: 'Demo Foods', label: 'demo: revoked', createdDaysAgo: 380, revokedDaysAgo: 30 },
  { key: DEMO_KEYS.expired, partner: 'Demo Foods', label: 'demo: expired', createdDaysAgo: 370, expiresDaysAgo: 1 },
  { key: DEMO_KEYS.suspended, partner: 'Suspended Co', label: 'demo: partner deactivated', createdDaysAgo: 300 },
  // An expiry in the future is still an active key.
  {
    key: DEMO_KEYS.other,
    partner: 'Other Eats',
    label: 'demo: other partner',
    createdDaysAgo: 420,
    expiresDaysAgo: -365,
  },
];

type UserSpec = {
  code: string;
  /** Branch name, also the user's display name and the suffix of its shops' names. */
  branch: string;
  createdDaysAgo: number;
  createdTime: string;
  /** Accounts without a shop behind them (LINKING, or an ERROR before any shop was found). */
  extraAccounts?: readonly { platform: Platform; status: AccountStatus }[];
};

type ShopSpec = {
  user: string | null;
  platform: Platform;
  platformShopId: string;
  status: ShopStatus;
  /** Required when `user` is null; otherwise the user's branch. */
  branch?: string;
  /** Default: a few days after the user registered. 0 = linked today (00:00 KST). */
  linkedDaysAgo?: number;
  /** Display names of assigned managers. */
  managers?: readonly string[];
  /** Registered alert numbers in slot order (slot = index + 1). */
  alerts?: readonly { phone: string; enabled: boolean }[];
};

type BrandSpec = {
  partner: PartnerName;
  code: string;
  displayName: string;
  /** Shop names are `${shopPrefix} ${branch}`. */
  shopPrefix: string;
  createdDaysAgo: number;
  createdTime: string;
  criticalRange: CriticalRange;
  vocabulary: Vocabulary;
  categories: Record<Platform, string>;
  users: readonly UserSpec[];
  managers: readonly { displayName: string; role: ManagerRole | null }[];
  alertNumbers: readonly { phone: string; manager: string | null }[];
  shops: readonly ShopSpec[];
  /** Reviews from this many days ago through today. */
  reviewDays: number;
  /** Mean reviews per shop and day (Poisson, scaled by shop popularity and weekday). */
  reviewsPerShopDay: number;
};

const CHICKEN_MENUS = [
  '후라이드치킨',
  '양념치킨',
  '간장치킨',
  '마라치킨',
  '반반치킨',
  '치즈볼',
  '감자튀김',
  '콜라 1.25L',
];

export const CHICKEN_HOUSE: BrandSpec = {
  partner: 'Demo Foods',
  code: 'chicken-house',
  displayName: '치킨하우스',
  shopPrefix: '치킨하우스',
  createdDaysAgo: 400,
  createdTime: '10:00:00',
  criticalRange: [1, 2],
  vocabulary: { food: '치킨', menus: CHICKEN_MENUS },
  categories: {
    BAEMIN: '치킨',
    CPEATS: '치킨',
    YOGIYO: '치킨·닭강정',
    DDANGYO: '치킨',
    NAVER: '치킨,닭강정',
    MUKKEBI: '치킨/찜닭',
  },
  // Registration order differs from code order (u-ch-003 before u-ch-002), and u-ch-004/u-ch-005 share the
  // same instant (inserted 005 first), so D-9 "created_at asc then code" is really exercised.
  users: [
    { code: 'u-ch-001', branch: '강남점', createdDaysAgo: 390, createdTime: '10:00:00' },
    { code: 'u-ch-003', branch: '홍대점', createdDaysAgo: 350, createdTime: '09:05:00' },
    {
      code: 'u-ch-002',
      branch: '역삼점',
      createdDaysAgo: 300,
      createdTime: '14:20:00',
      extraAccounts: [{ platform: 'YOGIYO', status: 'LINKING' }],
    },
    { code: 'u-ch-005', branch: '잠실점', createdDaysAgo: 280, createdTime: '11:00:00' },
    { code: 'u-ch-004', branch: '신촌점', createdDaysAgo: 280, createdTime: '11:00:00' },
    { code: 'u-ch-006', branch: '건대점', createdDaysAgo: 250, createdTime: '16:45:00' },
    {
      code: 'u-ch-007',
      branch: '분당점',
      createdDaysAgo: 220,
      createdTime: '13:30:00',
      extraAccounts: [{ platform: 'MUKKEBI', status: 'ERROR' }],
    },
    { code: 'u-ch-008', branch: '일산점', createdDaysAgo: 200, createdTime: '10:10:00' },
    { code: 'u-ch-009', branch: '수원점', createdDaysAgo: 180, createdTime: '15:00:00' },
    {
      code: 'u-ch-011',
      branch: '부산서면점',
      createdDaysAgo: 150,
      createdTime: '09:00:00',
      extraAccounts: [{ platform: 'BAEMIN', status: 'LINKING' }],
    },
    // Registered recently and has linked nothing: no platform account at all.
    { code: 'u-ch-012', branch: '대구동성로점', createdDaysAgo: 10, createdTime: '09:30:00' },
    // Registered two days ago; its only shop was linked today.
    { code: 'u-ch-010', branch: '인천점', createdDaysAgo: 2, createdTime: '15:00:00' },
  ],
  managers: [
    { displayName: '김영수', role: 'OWNER' },
    { displayName: '이지은', role: 'MANAGER' },
    { displayName: '박민준', role: 'MANAGER' },
    { displayName: '최서연', role: 'SUPERVISOR' },
    { displayName: '정하늘', role: 'SUPERVISOR' },
    { displayName: '한도윤', role: null },
  ],
  alertNumbers: [
    { phone: '010-1234-5678', manager: '김영수' },
    { phone: '010-2345-6789', manager: '이지은' },
    { phone: '010-3456-7890', manager: null },
    { phone: '010-4567-8901', manager: '최서연' },
    { phone: '010-5678-9012', manager: '한도윤' },
    { phone: '010-3141-5926', manager: '박민준' },
    // Verified for the brand but registered to no shop (two separate steps: partner guide § List shops of a brand).
    { phone: '010-8765-4321', manager: null },
  ],
  // Names share the brand prefix and differ in the Hangul branch only, so the name order does not depend on
  // the database collation; equal names on several platforms exercise the D-9 tie-breaks (platform as text,
  // then platform_shop_id: 잠실점 has two BAEMIN listings whose id order is the reverse of insertion order).
  shops: [
    {
      user: 'u-ch-001',
      platform: 'BAEMIN',
      platformShopId: '10482913',
      status: 'ACTIVE',
      managers: ['김영수', '이지은'],
      // The 3-alert shop: one disabled, one number of no administrator, one of an administrator (최서연) who
      // is not assigned here; 이지은 is assigned but has no number registered here.
      alerts: [
        { phone: '010-1234-5678', enabled: true },
        { phone: '010-3456-7890', enabled: true },
        { phone: '010-4567-8901', enabled: false },
      ],
    },
    {
      user: 'u-ch-001',
      platform: 'CPEATS',
      platformShopId: '583021',
      status: 'ACTIVE',
      managers: ['김영수'],
      alerts: [{ phone: '010-1234-5678', enabled: true }],
    },
    {
      user: 'u-ch-001',
      platform: 'YOGIYO',
      platformShopId: '1384021',
      status: 'ACTIVE',
      managers: ['이지은', '한도윤'],
    },
    { user: 'u-ch-001', platform: 'NAVER', platformShopId: '1938475620', status: 'ACTIVE' },
    { user: 'u-ch-001', platform: 'DDANGYO', platformShopId: '2031457789', status: 'ACTIVE' },
    {
      user: 'u-ch-002',
      platform: 'BAEMIN',
      platformShopId: '10593384',
      status: 'ACTIVE',
      managers: ['박민준'],
      alerts: [
        { phone: '010-3141-5926', enabled: true },
        { phone: '010-3456-7890', enabled: true },
      ],
    },
    { user: 'u-ch-002', platform: 'CPEATS', platformShopId: '583377', status: 'ACTIVE' },
    { user: 'u-ch-002', platform: 'MUKKEBI', platformShopId: 'MK40213', status: 'ACTIVE' },
    {
      user: 'u-ch-003',
      platform: 'BAEMIN',
      platformShopId: '10611027',
      status: 'ACTIVE',
      managers: ['박민준', '최서연'],
      alerts: [{ phone: '010-4567-8901', enabled: true }],
    },
    { user: 'u-ch-003', platform: 'YOGIYO', platformShopId: '1402288', status: 'INACTIVE' },
    { user: 'u-ch-003', platform: 'NAVER', platformShopId: '1184920337', status: 'ACTIVE' },
    {
      user: 'u-ch-004',
      platform: 'BAEMIN',
      platformShopId: '10702211',
      status: 'ACTIVE',
      managers: ['정하늘'],
      alerts: [{ phone: '010-5678-9012', enabled: true }],
    },
    { user: 'u-ch-004', platform: 'CPEATS', platformShopId: '590142', status: 'FAILED' },
    { user: 'u-ch-004', platform: 'DDANGYO', platformShopId: '2031502214', status: 'ACTIVE' },
    {
      user: 'u-ch-005',
      platform: 'BAEMIN',
      platformShopId: '10733408',
      status: 'ACTIVE',
      managers: ['이지은', '박민준', '정하늘'],
      alerts: [
        { phone: '010-2345-6789', enabled: true },
        { phone: '010-5678-9012', enabled: false },
      ],
    },
    { user: 'u-ch-005', platform: 'BAEMIN', platformShopId: '10733391', status: 'ACTIVE' },
    { user: 'u-ch-005', platform: 'YOGIYO', platformShopId: '1417760', status: 'ACTIVE' },
    { user: 'u-ch-005', platform: 'NAVER', platformShopId: '1290018846', status: 'ACTIVE' },
    { user: 'u-ch-005', platform: 'MUKKEBI', platformShopId: 'MK40588', status: 'ACTIVE' },
    { user: 'u-ch-006', platform: 'BAEMIN', platformShopId: '10758842', status: 'INACTIVE' },
    { user: 'u-ch-006', platform: 'CPEATS', platformShopId: '591873', status: 'ACTIVE', managers: ['한도윤'] },
    {
      user: 'u-ch-007',
      platform: 'BAEMIN',
      platformShopId: '10781135',
      status: 'ACTIVE',
      managers: ['최서연'],
      alerts: [{ phone: '010-4567-8901', enabled: true }],
    },
    { user: 'u-ch-007', platform: 'CPEATS', platformShopId: '592604', status: 'ACTIVE' },
    { user: 'u-ch-007', platform: 'NAVER', platformShopId: '1377201954', status: 'FAILED' },
    {
      user: 'u-ch-008',
      platform: 'YOGIYO',
      platformShopId: '1433902',
      status: 'ACTIVE',
      // A registered number, but no administrator assigned to the shop.
      alerts: [{ phone: '010-3456-7890', enabled: true }],
    },
    { user: 'u-ch-008', platform: 'DDANGYO', platformShopId: '2031688120', status: 'ACTIVE' },
    { user: 'u-ch-009', platform: 'BAEMIN', platformShopId: '10804476', status: 'ACTIVE' },
    { user: 'u-ch-009', platform: 'YOGIYO', platformShopId: '1440315', status: 'ACTIVE' },
    // Linked today: no aggregate row may exist for it yet (D-6).
    { user: 'u-ch-010', platform: 'BAEMIN', platformShopId: '10999001', status: 'ACTIVE', linkedDaysAgo: 0 },
    { user: 'u-ch-011', platform: 'MUKKEBI', platformShopId: 'MK41007', status: 'ACTIVE' },
    { user: 'u-ch-011', platform: 'NAVER', platformShopId: '1502938476', status: 'ACTIVE' },
    { user: 'u-ch-011', platform: 'CPEATS', platformShopId: '593318', status: 'ACTIVE' },
    // The one shop without a brand user (its `user` is null; D-10 groups its sales under user null).
    {
      user: null,
      branch: '본사직영점',
      platform: 'BAEMIN',
      platformShopId: '10200417',
      status: 'ACTIVE',
      linkedDaysAgo: 395,
      managers: ['김영수'],
      alerts: [
        { phone: '010-1234-5678', enabled: true },
        { phone: '010-2345-6789', enabled: true },
      ],
    },
  ],
  reviewDays: HISTORY_DAYS,
  reviewsPerShopDay: 1.1,
};

const PIZZA_LAB: BrandSpec = {
  partner: 'Demo Foods',
  code: 'pizza-lab',
  displayName: '피자랩',
  shopPrefix: '피자랩',
  // Same instant as bibim-table, inserted first: "created_at asc then brand_code" puts bibim-table first.
  createdDaysAgo: 200,
  createdTime: '12:00:00',
  // A wider range than the default, so that a 3-star review is critical here and not in chicken-house.
  criticalRange: [1, 3],
  vocabulary: {
    food: '피자',
    menus: ['페퍼로니 피자', '고르곤졸라', '포테이토 피자', '치즈오븐스파게티', '갈릭디핑소스'],
  },
  categories: {
    BAEMIN: '피자',
    CPEATS: '피자',
    YOGIYO: '피자·양식',
    DDANGYO: '피자',
    NAVER: '피자',
    MUKKEBI: '피자/양식',
  },
  users: [
    { code: 'u-pz-001', branch: '판교점', createdDaysAgo: 190, createdTime: '10:00:00' },
    { code: 'u-pz-002', branch: '광교점', createdDaysAgo: 170, createdTime: '11:30:00' },
    {
      code: 'u-pz-003',
      branch: '송도점',
      createdDaysAgo: 150,
      createdTime: '14:00:00',
      extraAccounts: [{ platform: 'CPEATS', status: 'LINKING' }],
    },
  ],
  managers: [
    { displayName: '윤지호', role: 'OWNER' },
    { displayName: '서민아', role: null },
  ],
  alertNumbers: [
    { phone: '010-2222-3333', manager: '윤지호' },
    { phone: '010-4444-5555', manager: null },
  ],
  shops: [
    {
      user: 'u-pz-001',
      platform: 'BAEMIN',
      platformShopId: '10311872',
      status: 'ACTIVE',
      managers: ['윤지호'],
      alerts: [
        { phone: '010-2222-3333', enabled: true },
        { phone: '010-4444-5555', enabled: true },
      ],
    },
    { user: 'u-pz-001', platform: 'YOGIYO', platformShopId: '1355120', status: 'ACTIVE', managers: ['서민아'] },
    {
      user: 'u-pz-002',
      platform: 'CPEATS',
      platformShopId: '571234',
      status: 'ACTIVE',
      alerts: [{ phone: '010-2222-3333', enabled: true }],
    },
    { user: 'u-pz-002', platform: 'NAVER', platformShopId: '1655320981', status: 'INACTIVE' },
    { user: 'u-pz-003', platform: 'MUKKEBI', platformShopId: 'MK38820', status: 'ACTIVE' },
  ],
  reviewDays: 60,
  reviewsPerShopDay: 0.9,
};

const BIBIM_TABLE: BrandSpec = {
  partner: 'Demo Foods',
  code: 'bibim-table',
  displayName: '비빔테이블',
  shopPrefix: '비빔테이블',
  createdDaysAgo: 200,
  createdTime: '12:00:00',
  criticalRange: [1, 2],
  vocabulary: { food: '비빔밥', menus: ['돌솥비빔밥', '육회비빔밥', '된장찌개', '계란찜'] },
  categories: { BAEMIN: '한식', CPEATS: '한식', YOGIYO: '한식', DDANGYO: '한식', NAVER: '한식', MUKKEBI: '한식' },
  users: [
    { code: 'u-bb-001', branch: '을지로점', createdDaysAgo: 180, createdTime: '10:00:00' },
    { code: 'u-bb-002', branch: '성수점', createdDaysAgo: 160, createdTime: '10:00:00' },
  ],
  managers: [{ displayName: '강하린', role: 'MANAGER' }],
  alertNumbers: [{ phone: '010-6666-7777', manager: '강하린' }],
  shops: [
    {
      user: 'u-bb-001',
      platform: 'BAEMIN',
      platformShopId: '10377650',
      status: 'ACTIVE',
      managers: ['강하린'],
      alerts: [{ phone: '010-6666-7777', enabled: true }],
    },
    { user: 'u-bb-001', platform: 'DDANGYO', platformShopId: '2031770045', status: 'ACTIVE' },
    { user: 'u-bb-002', platform: 'NAVER', platformShopId: '1711029384', status: 'ACTIVE' },
  ],
  reviewDays: 60,
  reviewsPerShopDay: 0.8,
};

const BURGER_TOWN: BrandSpec = {
  partner: 'Other Eats',
  code: 'burger-town',
  displayName: '버거타운',
  shopPrefix: '버거타운',
  createdDaysAgo: 300,
  createdTime: '09:00:00',
  criticalRange: [1, 2],
  vocabulary: { food: '버거', menus: ['치즈버거', '더블불고기버거', '감자튀김', '어니언링', '제로콜라'] },
  categories: {
    BAEMIN: '패스트푸드',
    CPEATS: '버거',
    YOGIYO: '패스트푸드',
    DDANGYO: '패스트푸드',
    NAVER: '햄버거',
    MUKKEBI: '버거/패스트푸드',
  },
  users: [
    { code: 'u-bt-001', branch: '해운대점', createdDaysAgo: 290, createdTime: '10:00:00' },
    { code: 'u-bt-002', branch: '서면점', createdDaysAgo: 260, createdTime: '10:00:00' },
    { code: 'u-bt-003', branch: '광안리점', createdDaysAgo: 230, createdTime: '10:00:00' },
  ],
  managers: [
    { displayName: '조현우', role: 'OWNER' },
    { displayName: '배수진', role: 'SUPERVISOR' },
  ],
  alertNumbers: [{ phone: '010-7777-8888', manager: '조현우' }],
  shops: [
    {
      user: 'u-bt-001',
      platform: 'BAEMIN',
      platformShopId: '10455021',
      status: 'ACTIVE',
      managers: ['조현우', '배수진'],
      alerts: [{ phone: '010-7777-8888', enabled: true }],
    },
    { user: 'u-bt-001', platform: 'CPEATS', platformShopId: '577810', status: 'ACTIVE' },
    { user: 'u-bt-002', platform: 'YOGIYO', platformShopId: '1360094', status: 'FAILED' },
    { user: 'u-bt-002', platform: 'NAVER', platformShopId: '1820394756', status: 'ACTIVE' },
    { user: 'u-bt-003', platform: 'MUKKEBI', platformShopId: 'MK39001', status: 'ACTIVE' },
  ],
  reviewDays: 60,
  reviewsPerShopDay: 1.0,
};

const NOODLE_BAR: BrandSpec = {
  partner: 'Suspended Co',
  code: 'noodle-bar',
  displayName: '누들바',
  shopPrefix: '누들바',
  createdDaysAgo: 250,
  createdTime: '09:00:00',
  criticalRange: [1, 2],
  vocabulary: { food: '국수', menus: ['잔치국수', '비빔국수', '칼국수', '만두'] },
  categories: { BAEMIN: '분식', CPEATS: '분식', YOGIYO: '분식', DDANGYO: '분식', NAVER: '국수', MUKKEBI: '분식' },
  users: [{ code: 'u-nb-001', branch: '종로점', createdDaysAgo: 240, createdTime: '10:00:00' }],
  managers: [],
  alertNumbers: [],
  shops: [
    { user: 'u-nb-001', platform: 'BAEMIN', platformShopId: '10266103', status: 'ACTIVE' },
    { user: 'u-nb-001', platform: 'NAVER', platformShopId: '1590384722', status: 'ACTIVE' },
  ],
  reviewDays: 60,
  reviewsPerShopDay: 0.12,
};

/** In insertion order (ids follow it); pizza-lab before bibim-table on purpose, see PIZZA_LAB. */
const BRANDS: readonly BrandSpec[] = [CHICKEN_HOUSE, PIZZA_LAB, BIBIM_TABLE, BURGER_TOWN, NOODLE_BAR];

// ---------------------------------------------------------------------------------------------------------
// Pinned chicken-house reviews: every edge case exists whatever the seed, at a known shop and time.

type PinnedReview = {
  platformShopId: string;
  daysAgo: number;
  time: string;
  content: string;
  rating: number | null;
  menus: string[] | null;
  aiNegative: boolean;
  sentiment: Sentiment;
  reply: ReplyState;
  replyAfterMinutes?: number;
  alertAfterMinutes?: number;
};

const GANGNAM_BAEMIN = '10482913';
const JAMSIL_BAEMIN = '10733408';
const SINCHON_BAEMIN = '10702211';

export const PINNED_REVIEWS: readonly PinnedReview[] = [
  // KST day boundaries: 00:00:00 and 23:59:59 belong to their own day (D-5).
  {
    platformShopId: GANGNAM_BAEMIN,
    daysAgo: 10,
    time: '00:00:00',
    content: '자정 넘어서 주문했는데도 바삭해요',
    rating: 4,
    menus: ['후라이드치킨'],
    aiNegative: false,
    sentiment: 'positive',
    reply: 'POSTED',
    replyAfterMinutes: 30,
  },
  {
    platformShopId: GANGNAM_BAEMIN,
    daysAgo: 10,
    time: '23:59:59',
    content: '마감 직전 주문인데 친절했어요',
    rating: 5,
    menus: null,
    aiNegative: false,
    sentiment: 'positive',
    reply: 'NONE',
  },
  {
    platformShopId: GANGNAM_BAEMIN,
    daysAgo: 11,
    time: '23:59:59',
    content: '늦은 밤 야식으로 최고',
    rating: 4.5,
    menus: ['양념치킨', '치즈볼'],
    aiNegative: false,
    sentiment: 'positive',
    reply: 'OWNER_DIRECT',
    replyAfterMinutes: 600,
  },
  // Identical written_at on two shops and twice on one shop: review_code breaks the tie (D-9).
  {
    platformShopId: GANGNAM_BAEMIN,
    daysAgo: 5,
    time: '12:34:56',
    content: '점심으로 먹었어요 무난해요',
    rating: 3,
    menus: null,
    aiNegative: false,
    sentiment: 'neutral',
    reply: 'NONE',
  },
  {
    platformShopId: JAMSIL_BAEMIN,
    daysAgo: 5,
    time: '12:34:56',
    content: '점심 세트 구성이 좋아요',
    rating: 4,
    menus: ['반반치킨'],
    aiNegative: false,
    sentiment: 'positive',
    reply: 'POSTED',
    replyAfterMinutes: 45,
  },
  {
    platformShopId: SINCHON_BAEMIN,
    daysAgo: 20,
    time: '19:00:00',
    content: '저녁으로 시켰는데 양이 많아요',
    rating: 5,
    menus: ['후라이드치킨', '감자튀김'],
    aiNegative: false,
    sentiment: 'positive',
    reply: 'POSTED',
    replyAfterMinutes: 120,
  },
  // Critical by stars, alert sent, not replied: handled but NOT_REPLIED.
  {
    platformShopId: SINCHON_BAEMIN,
    daysAgo: 20,
    time: '19:00:00',
    content: '저녁 배달이 너무 늦었어요',
    rating: 2,
    menus: null,
    aiNegative: true,
    sentiment: 'negative',
    reply: 'NONE',
    alertAfterMinutes: 5,
  },
  // Critical by AI with rating 5, alert sent, not replied.
  {
    platformShopId: GANGNAM_BAEMIN,
    daysAgo: 3,
    time: '20:15:00',
    content: '별점은 5점 드리지만 배달이 너무 늦었어요',
    rating: 5,
    menus: ['간장치킨'],
    aiNegative: true,
    sentiment: 'negative',
    reply: 'NONE',
    alertAfterMinutes: 3,
  },
  // No rating, AI negative (critical by AI alone); a failed reply whose text is stored but must not show.
  {
    platformShopId: JAMSIL_BAEMIN,
    daysAgo: 7,
    time: '18:20:00',
    content: '콜라가 빠져서 왔어요. 별점은 안 남길게요',
    rating: null,
    menus: ['양념치킨'],
    aiNegative: true,
    sentiment: 'negative',
    reply: 'FAILED',
    replyAfterMinutes: 60,
    alertAfterMinutes: 2,
  },
  // No rating, not negative: not critical.
  {
    platformShopId: GANGNAM_BAEMIN,
    daysAgo: 8,
    time: '13:05:00',
    content: '그냥 그래요',
    rating: null,
    menus: null,
    aiNegative: false,
    sentiment: 'neutral',
    reply: 'NONE',
  },
  // Star-only review.
  {
    platformShopId: JAMSIL_BAEMIN,
    daysAgo: 4,
    time: '21:40:00',
    content: '',
    rating: 5,
    menus: ['후라이드치킨'],
    aiNegative: false,
    sentiment: 'positive',
    reply: 'POSTED',
    replyAfterMinutes: 90,
  },
  // Rating 0.5 (counts as 1, D-7) with a scheduled reply.
  {
    platformShopId: SINCHON_BAEMIN,
    daysAgo: 6,
    time: '17:45:00',
    content: '너무 짜서 못 먹겠어요',
    rating: 0.5,
    menus: null,
    aiNegative: true,
    sentiment: 'negative',
    reply: 'SCHEDULED',
    replyAfterMinutes: 30,
    alertAfterMinutes: 1,
  },
  // '마라' appears only in menus, never in any content.
  {
    platformShopId: GANGNAM_BAEMIN,
    daysAgo: 9,
    time: '19:30:00',
    content: '매콤하고 맛있어요',
    rating: 4.5,
    menus: ['마라치킨'],
    aiNegative: false,
    sentiment: 'positive',
    reply: 'POSTED',
    replyAfterMinutes: 40,
  },
  // Literal '%', '_' and '\' (D-8) and mixed-case ASCII.
  {
    platformShopId: GANGNAM_BAEMIN,
    daysAgo: 12,
    time: '18:00:00',
    content: '100% 만족합니다',
    rating: 5,
    menus: null,
    aiNegative: false,
    sentiment: 'positive',
    reply: 'NONE',
  },
  {
    platformShopId: JAMSIL_BAEMIN,
    daysAgo: 13,
    time: '19:10:00',
    content: 'a_b 세트 시켰는데 괜찮아요',
    rating: 3.5,
    menus: ['반반치킨'],
    aiNegative: false,
    sentiment: 'neutral',
    reply: 'OWNER_DIRECT',
    replyAfterMinutes: 300,
  },
  {
    platformShopId: GANGNAM_BAEMIN,
    daysAgo: 15,
    time: '22:00:00',
    content: 'axb 쿠폰 썼어요',
    rating: 4,
    menus: null,
    aiNegative: false,
    sentiment: 'neutral',
    reply: 'NONE',
  },
  {
    platformShopId: SINCHON_BAEMIN,
    daysAgo: 14,
    time: '20:20:00',
    content: 'Crispy 하고 CRISPY 합니다 crispy!',
    rating: 5,
    menus: ['후라이드치킨'],
    aiNegative: false,
    sentiment: 'positive',
    reply: 'POSTED',
    replyAfterMinutes: 60,
  },
  {
    platformShopId: JAMSIL_BAEMIN,
    daysAgo: 2,
    time: '12:00:00',
    content: '맛\\양 둘 다 만족',
    rating: 4,
    menus: null,
    aiNegative: false,
    sentiment: 'positive',
    reply: 'SCHEDULED',
    replyAfterMinutes: 600,
  },
  // The first instant of today: always at or before `now`.
  {
    platformShopId: GANGNAM_BAEMIN,
    daysAgo: 0,
    time: '00:00:00',
    content: '오늘 첫 주문! 맛있어요',
    rating: 5,
    menus: null,
    aiNegative: false,
    sentiment: 'positive',
    reply: 'NONE',
  },
];

// ---------------------------------------------------------------------------------------------------------
// The generator

type ShopRow = {
  id: number;
  brand: BrandSpec;
  brandId: number;
  spec: ShopSpec;
  linkedAt: Date;
  alertable: boolean;
};

type Clock = { now: Date; today: string };

/** `HH:MM:SS` KST, `daysAgo` days before today. */
function kstAt(clock: Clock, daysAgo: number, time: string): Date {
  return atKst(addDays(clock.today, -daysAgo), time);
}

function userOf(brand: BrandSpec, code: string): UserSpec {
  const user = brand.users.find((candidate) => candidate.code === code);
  if (!user) throw new Error(`demo data: unknown user ${code} in ${brand.code}`);
  return user;
}

function shopName(brand: BrandSpec, shop: ShopSpec): string {
  const branch = shop.branch ?? (shop.user ? userOf(brand, shop.user).branch : undefined);
  if (!branch) throw new Error(`demo data: shop ${shop.platformShopId} has neither user nor branch`);
  return `${brand.shopPrefix} ${branch}`;
}

function linkedAtOf(clock: Clock, brand: BrandSpec, shop: ShopSpec, indexInUser: number): Date {
  if (shop.linkedDaysAgo !== undefined) return kstAt(clock, shop.linkedDaysAgo, '00:00:00');
  if (!shop.user) throw new Error(`demo data: shop ${shop.platformShopId} needs linkedDaysAgo`);
  const user = userOf(brand, shop.user);
  return kstAt(clock, user.createdDaysAgo - 1 - indexInUser, '11:00:00');
}

/** Account status from the user's shops on a platform (partner guide § List users of a brand). */
function accountStatusOf(statuses: readonly ShopStatus[]): AccountStatus {
  if (statuses.includes('ACTIVE')) return 'ACTIVE';
  if (statuses.includes('FAILED')) return 'ERROR';
  return 'INACTIVE';
}

/** First KST day a shop has reviews or sales: the window start, or its link day if later. */
function firstDayOf(shop: ShopRow, windowStart: string): string {
  const linkedDay = kstDay(shop.linkedAt);
  return linkedDay > windowStart ? linkedDay : windowStart;
}

/** Last KST day a shop has reviews or sales: today, or the day before it stopped being collected. */
function lastDayOf(shop: ShopRow, clock: Clock): string {
  return shop.spec.status === 'ACTIVE' ? clock.today : addDays(clock.today, -(STOPPED_DAYS_AGO + 1));
}

function* daysBetween(first: string, last: string): Generator<string> {
  for (let day = first; day <= last; day = addDays(day, 1)) yield day;
}

async function insertBrand(db: Db, clock: Clock, partnerId: number, brand: BrandSpec): Promise<ShopRow[]> {
  const [brandRow] = await db
    .insert(brands)
    .values({
      partnerId,
      brandCode: brand.code,
      displayName: brand.displayName,
      criticalStarMin: brand.criticalRange[0],
      criticalStarMax: brand.criticalRange[1],
      createdAt: kstAt(clock, brand.createdDaysAgo, brand.createdTime),
    })
    .returning({ id: brands.id });
  if (!brandRow) throw new Error(`demo data: brand ${brand.code} not inserted`);
  const brandId = brandRow.id;

  const userRows = await db
    .insert(brandUsers)
    .values(
      brand.users.map((user) => ({
        brandId,
        userCode: user.code,
        displayName: user.branch,
        createdAt: kstAt(clock, user.createdDaysAgo, user.createdTime),
      })),
    )
    .returning({ id: brandUsers.id, userCode: brandUsers.userCode });
  const userIds = new Map(userRows.map((row) => [row.userCode, row.id]));

  const shopsPerUser = new Map<string | null, number>();
  const shopValues = brand.shops.map((shop) => {
    const indexInUser = shopsPerUser.get(shop.user) ?? 0;
    shopsPerUser.set(shop.user, indexInUser + 1);
    const linkedAt = linkedAtOf(clock, brand, shop, indexInUser);
    return {
      brandId,
      userId: shop.user === null ? null : (userIds.get(shop.user) ?? null),
      platform: shop.platform,
      platformShopId: shop.platformShopId,
      name: shopName(brand, shop),
      categoryName: brand.categories[shop.platform],
      status: shop.status,
      linkedAt,
      createdAt: linkedAt,
    } satisfies typeof shops.$inferInsert;
  });
  const shopRows = await db.insert(shops).values(shopValues).returning({
    id: shops.id,
    platform: shops.platform,
    platformShopId: shops.platformShopId,
    linkedAt: shops.linkedAt,
  });
  const shopIdOf = (spec: ShopSpec): ShopRow['id'] => {
    const row = shopRows.find((r) => r.platform === spec.platform && r.platformShopId === spec.platformShopId);
    if (!row) throw new Error(`demo data: shop ${spec.platformShopId} not inserted`);
    return row.id;
  };

  // One account per (user, platform): derived from the user's shops, plus the accounts without a shop.
  const accounts: (typeof platformAccounts.$inferInsert)[] = [];
  for (const user of brand.users) {
    const userId = userIds.get(user.code);
    if (userId === undefined) continue;
    const byPlatform = new Map<Platform, { statuses: ShopStatus[]; firstLinkedAt: Date }>();
    for (const [index, shop] of brand.shops.entries()) {
      if (shop.user !== user.code) continue;
      const linkedAt = shopValues[index]?.linkedAt ?? clock.now;
      const entry = byPlatform.get(shop.platform);
      if (entry) {
        entry.statuses.push(shop.status);
        if (linkedAt < entry.firstLinkedAt) entry.firstLinkedAt = linkedAt;
      } else {
        byPlatform.set(shop.platform, { statuses: [shop.status], firstLinkedAt: linkedAt });
      }
    }
    for (const [platform, { statuses, firstLinkedAt }] of byPlatform) {
      accounts.push({
        userId,
        platform,
        status: accountStatusOf(statuses),
        createdAt: addMs(firstLinkedAt, -10 * 60_000),
      });
    }
    for (const extra of user.extraAccounts ?? []) {
      const createdAt = notAfter(kstAt(clock, user.createdDaysAgo - 3, '12:00:00'), clock.now);
      accounts.push({ userId, platform: extra.platform, status: extra.status, createdAt });
    }
  }
  if (accounts.length > 0) await db.insert(platformAccounts).values(accounts);

  const managerIds = new Map<string, number>();
  if (brand.managers.length > 0) {
    const rows = await db
      .insert(managers)
      .values(
        brand.managers.map((manager, index) => ({
          brandId,
          displayName: manager.displayName,
          role: manager.role,
          createdAt: kstAt(clock, brand.createdDaysAgo - 1 - index, '09:00:00'),
        })),
      )
      .returning({ id: managers.id, displayName: managers.displayName });
    for (const row of rows) managerIds.set(row.displayName, row.id);
  }
  const managerIdOf = (name: string): number => {
    const id = managerIds.get(name);
    if (id === undefined) throw new Error(`demo data: unknown manager ${name} in ${brand.code}`);
    return id;
  };

  const numberIds = new Map<string, number>();
  if (brand.alertNumbers.length > 0) {
    const rows = await db
      .insert(alertNumbers)
      .values(
        brand.alertNumbers.map((number, index) => {
          const verifiedAt = kstAt(clock, brand.createdDaysAgo - 10 - index, '10:00:00');
          return {
            brandId,
            phoneNumber: number.phone,
            managerId: number.manager === null ? null : managerIdOf(number.manager),
            verifiedAt,
            createdAt: verifiedAt,
          };
        }),
      )
      .returning({ id: alertNumbers.id, phoneNumber: alertNumbers.phoneNumber });
    for (const row of rows) numberIds.set(row.phoneNumber, row.id);
  }

  const assignments: (typeof shopManagers.$inferInsert)[] = [];
  const registrations: (typeof shopAlertNumbers.$inferInsert)[] = [];
  const result: ShopRow[] = [];
  for (const [index, spec] of brand.shops.entries()) {
    const shopId = shopIdOf(spec);
    const linkedAt = shopValues[index]?.linkedAt ?? clock.now;
    for (const name of spec.managers ?? []) {
      assignments.push({
        brandId,
        shopId,
        managerId: managerIdOf(name),
        createdAt: notAfter(addMs(linkedAt, DAY_MS), clock.now),
      });
    }
    for (const [slot, alert] of (spec.alerts ?? []).entries()) {
      const alertNumberId = numberIds.get(alert.phone);
      if (alertNumberId === undefined) throw new Error(`demo data: unknown alert number ${alert.phone}`);
      registrations.push({
        brandId,
        shopId,
        alertNumberId,
        slot: slot + 1,
        enabled: alert.enabled,
        createdAt: notAfter(addMs(linkedAt, 2 * DAY_MS), clock.now),
      });
    }
    result.push({
      id: shopId,
      brand,
      brandId,
      spec,
      linkedAt,
      alertable: (spec.alerts ?? []).some((alert) => alert.enabled),
    });
  }
  if (assignments.length > 0) await db.insert(shopManagers).values(assignments);
  if (registrations.length > 0) await db.insert(shopAlertNumbers).values(registrations);
  return result;
}

type ReviewDraft = Omit<NewReview, 'reviewCode'>;

/** Random reviews of one shop, day by day; each (shop, day) has its own stream (see random.ts). */
function generateShopReviews(rand: Random, clock: Clock, shop: ShopRow): ReviewDraft[] {
  const { brand } = shop;
  const shopRand = rand.derive(hashString(brand.code), hashString(`${shop.spec.platform}:${shop.spec.platformShopId}`));
  const popularity = shopRand.derive(0).float(0.5, 1.5);
  const first = firstDayOf(shop, addDays(clock.today, -brand.reviewDays));
  const last = lastDayOf(shop, clock);
  const drafts: ReviewDraft[] = [];
  for (const day of daysBetween(first, last)) {
    const dayRand = shopRand.derive(hashString(day));
    const isToday = day === clock.today;
    let reviewCount = dayRand.poisson(brand.reviewsPerShopDay * popularity * weekdayFactor(day));
    // The shop linked today must have reviews of today (and only of today).
    if (isToday && first === clock.today) reviewCount = Math.max(reviewCount, 2);
    const dayStart = kstDayStart(day);
    const from = Math.max(dayStart.getTime(), shop.linkedAt.getTime());
    for (let k = 0; k < reviewCount; k++) {
      const reviewRand = dayRand.derive(k + 1);
      let writtenAt: Date;
      if (isToday || from > dayStart.getTime()) {
        // Today (or the link day): anywhere between the start and `now`, never after it.
        const to = isToday ? clock.now.getTime() : dayStart.getTime() + DAY_MS - 1000;
        writtenAt = floorToSecond(new Date(from + reviewRand.next() * Math.max(0, to - from)));
      } else {
        // A few reviews exactly on the day boundaries; the rest at plausible order times.
        const boundary = reviewRand.weighted<number | null>([
          [0, 1],
          [86_399, 1],
          [null, 98],
        ]);
        writtenAt = addMs(dayStart, (boundary ?? orderSecondOfDay(reviewRand)) * 1000);
      }
      drafts.push({
        brandId: shop.brandId,
        shopId: shop.id,
        writtenAt,
        ...generateReviewBody(reviewRand, {
          writtenAt,
          now: clock.now,
          vocabulary: brand.vocabulary,
          criticalRange: brand.criticalRange,
          alertable: shop.alertable,
        }),
      });
    }
  }
  return drafts;
}

function pinnedReviewDraft(rand: Random, clock: Clock, pinned: PinnedReview, shop: ShopRow): ReviewDraft {
  const writtenAt = kstAt(clock, pinned.daysAgo, pinned.time);
  const reply = replyFor(
    rand,
    pinned.reply,
    pinned.sentiment,
    writtenAt,
    clock.now,
    (pinned.replyAfterMinutes ?? 0) * 60_000,
  );
  return {
    brandId: shop.brandId,
    shopId: shop.id,
    writtenAt,
    content: pinned.content,
    rating: pinned.rating,
    menus: pinned.menus,
    aiNegative: pinned.aiNegative,
    ...reply,
    alertSentAt:
      pinned.alertAfterMinutes === undefined
        ? null
        : notAfter(addMs(writtenAt, pinned.alertAfterMinutes * 60_000), clock.now),
    createdAt: notAfter(addMs(writtenAt, 15 * 60_000), clock.now),
  };
}

/** `R` + 9 digits: fixed width, so text order is age order (D-9 tie-break on review_id). */
export function demoReviewCode(sequence: number): string {
  return `R${String(sequence).padStart(9, '0')}`;
}

/**
 * Inserts the whole demo data set into an empty, migrated database and returns what it wrote. Runs in one
 * transaction: either everything is there or nothing is.
 */
export async function seedDemo(db: Db, options: { now?: Date; seed?: number } = {}): Promise<DemoSummary> {
  const now = options.now ?? new Date();
  const clock: Clock = { now, today: kstToday(now) };
  const rand = createRandom(options.seed ?? DEFAULT_SEED);

  return db.transaction(async (tx) => {
    const [existing] = await tx.select({ n: count() }).from(partners);
    if (existing && existing.n > 0) throw new Error('seedDemo needs an empty database (partners already exist)');

    const partnerRows = await tx
      .insert(partners)
      .values(
        PARTNERS.map((partner) => ({
          name: partner.name,
          isActive: partner.isActive,
          createdAt: kstAt(clock, partner.createdDaysAgo, '09:00:00'),
        })),
      )
      .returning({ id: partners.id, name: partners.name });
    const partnerIdOf = (name: PartnerName): number => {
      const row = partnerRows.find((candidate) => candidate.name === name);
      if (!row) throw new Error(`demo data: partner ${name} not inserted`);
      return row.id;
    };

    // D-4: only the hash and a display prefix are stored.
    await tx.insert(apiKeys).values(
      KEYS.map((key) => ({
        partnerId: partnerIdOf(key.partner),
        keyHash: hashApiKey(key.key),
        displayPrefix: displayPrefixOf(key.key),
        label: key.label,
        revokedAt: key.revokedDaysAgo === undefined ? null : kstAt(clock, key.revokedDaysAgo, '10:00:00'),
        expiresAt: key.expiresDaysAgo === undefined ? null : kstAt(clock, key.expiresDaysAgo, '00:00:00'),
        createdAt: kstAt(clock, key.createdDaysAgo, '09:30:00'),
      })),
    );

    const allShops: ShopRow[] = [];
    for (const brand of BRANDS) allShops.push(...(await insertBrand(tx, clock, partnerIdOf(brand.partner), brand)));

    const [webhookBrand] = await tx
      .select({ id: brands.id })
      .from(brands)
      .where(eq(brands.brandCode, DEMO_WEBHOOK.brand));
    await tx.insert(webhookEndpoints).values({
      id: DEMO_WEBHOOK.id,
      partnerId: partnerIdOf('Demo Foods'),
      url: DEMO_WEBHOOK.url,
      brandIds: webhookBrand ? [webhookBrand.id] : [],
      secret: sealSecret(DEMO_WEBHOOK.secretsKey, DEMO_WEBHOOK.id, DEMO_WEBHOOK.secret),
      createdAt: kstAt(clock, 1, '09:00:00'),
    });

    // Reviews of all brands get their codes in written order, so the code order is the age order; equal
    // instants keep generation order (Array.prototype.sort is stable).
    const drafts: ReviewDraft[] = [];
    for (const shop of allShops) drafts.push(...generateShopReviews(rand, clock, shop));
    const pinnedRand = rand.derive(hashString('pinned'));
    for (const [index, pinned] of PINNED_REVIEWS.entries()) {
      const shop = allShops.find((s) => s.brand === CHICKEN_HOUSE && s.spec.platformShopId === pinned.platformShopId);
      if (!shop) throw new Error(`demo data: pinned review on unknown shop ${pinned.platformShopId}`);
      drafts.push(pinnedReviewDraft(pinnedRand.derive(index), clock, pinned, shop));
    }
    drafts.sort((a, b) => a.writtenAt.getTime() - b.writtenAt.getTime());
    const reviewRows: NewReview[] = drafts.map((draft, index) => ({ ...draft, reviewCode: demoReviewCode(index + 1) }));
    await insertRows(tx, reviews, reviewRows);

    // One snapshot per day for every shop on a sales platform (partner guide § Sales), while it is collected.
    const snapshots: (typeof salesSnapshots.$inferInsert)[] = [];
    const salesPlatforms: readonly Platform[] = SALES_PLATFORMS;
    for (const shop of allShops) {
      if (!salesPlatforms.includes(shop.spec.platform)) continue;
      const shopRand = rand.derive(
        hashString('sales'),
        hashString(`${shop.spec.platform}:${shop.spec.platformShopId}`),
      );
      const base = shopRand.derive(0).int(300, 1500) * 1000;
      for (const day of daysBetween(firstDayOf(shop, addDays(clock.today, -HISTORY_DAYS)), lastDayOf(shop, clock))) {
        snapshots.push({
          shopId: shop.id,
          day,
          amount: salesAmount(shopRand.derive(hashString(day)), base, day),
          createdAt: notAfter(atKst(day, '23:30:00'), now),
        });
      }
    }
    await insertRows(tx, salesSnapshots, snapshots);

    return {
      partners: partnerRows.length,
      brands: BRANDS.map((brand) => brand.code),
      shops: allShops.length,
      reviews: reviewRows.length,
      salesSnapshots: snapshots.length,
    };
  });
}
