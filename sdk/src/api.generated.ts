// Generated from the router (routers/index.ts) by sdk/scripts/generate-types.ts: do not edit.
// `npm run sdk:generate` rewrites it; test/sdk/types.test.ts fails when it is stale.

import type { APIPromise, ChangeFeed, NarrowedPage, RequestOptions } from './request.js';

/** Every error code the API answers with (the `status` of the error envelope). */
export type PartnerErrorCode =
  | 'PARTNER_API_INVALID_PARAMETER'
  | 'PARTNER_API_KEY_REQUIRED'
  | 'PARTNER_API_KEY_INVALID'
  | 'PARTNER_API_KEY_INACTIVE'
  | 'PARTNER_API_KEY_EXPIRED'
  | 'PARTNER_API_FORBIDDEN'
  | 'PARTNER_API_BRAND_NOT_FOUND'
  | 'PARTNER_API_REVIEW_NOT_FOUND'
  | 'PARTNER_API_USER_NOT_FOUND'
  | 'PARTNER_API_NOT_FOUND'
  | 'PARTNER_API_CURSOR_EXPIRED'
  | 'PARTNER_API_RATE_LIMITED'
  | 'PARTNER_API_INTERNAL_ERROR';

/** A brand of your partner account. */
export type Brand = {
  /** Brand identifier, used in paths. */
  brand_code: string;
  /** Brand name. */
  display_name: string;
  /** Brand creation time (KST). */
  created_at: string;
};

/** A shop owner registered in a brand, with the platform accounts they linked. */
export type User = {
  /** User identifier, used in the single-user path. */
  user_code: string;
  /** Display name (branch name). */
  display_name: string;
  /** Platform accounts the user linked. */
  platform_accounts: {
    /** A delivery or place-listing platform. */
    platform: 'BAEMIN' | 'CPEATS' | 'YOGIYO' | 'DDANGYO' | 'NAVER' | 'MUKKEBI';
    /** ACTIVE: linked, the platform has an active shop; INACTIVE: linked, no active shop; ERROR: link error, collection stopped; LINKING: link in progress. */
    status: 'ACTIVE' | 'INACTIVE' | 'ERROR' | 'LINKING';
  }[];
  /** Time registered in the brand (KST). */
  created_at: string;
};

/** A shop of a brand on one platform. */
export type Shop = {
  /** Shop name as registered on the platform. */
  name: string;
  /** A delivery or place-listing platform. */
  platform: 'BAEMIN' | 'CPEATS' | 'YOGIYO' | 'DDANGYO' | 'NAVER' | 'MUKKEBI';
  /** Platform-side shop id; matches the same field in reviews. */
  platform_shop_id: string;
  /** Platform category. */
  category_name: string;
  /** ACTIVE: linked, reviews collected; INACTIVE: link stopped, nothing collected; FAILED: platform login error, nothing collected. */
  status: 'ACTIVE' | 'INACTIVE' | 'FAILED';
  /** The brand user the shop belongs to; null if none. */
  user: {
    user_code: string;
    display_name: string;
  } | null;
  /** Head-office administrators assigned to the shop (not shop owners; assignment does not mean alerts). */
  managers: {
    /** Manager name. */
    display_name: string;
    /** OWNER, MANAGER or SUPERVISOR; null when none. */
    role: 'OWNER' | 'MANAGER' | 'SUPERVISOR' | null;
  }[];
  /** The authoritative list of dissatisfied-review alert recipients; at most 3. */
  critical_review_alerts: {
    /** Number that receives alerts. */
    phone_number: string;
    /** false: registered but nothing is sent. */
    enabled: boolean;
    /** Owner of the number; null if it belongs to no administrator. */
    manager: {
      /** Manager name. */
      display_name: string;
      /** OWNER, MANAGER or SUPERVISOR; null when none. */
      role: 'OWNER' | 'MANAGER' | 'SUPERVISOR' | null;
    } | null;
  }[];
};

/** A review, as the list and the single-review call answer it. */
export type Review = {
  /** Review identifier, used in the single-review path. */
  review_id: string;
  /** Platform-side shop id; matches the shop field. */
  platform_shop_id: string;
  shop_name: string;
  /** A delivery or place-listing platform. */
  platform: 'BAEMIN' | 'CPEATS' | 'YOGIYO' | 'DDANGYO' | 'NAVER' | 'MUKKEBI';
  /** Review written time (KST). */
  date: string;
  /** Review text; empty string for a star-only review. */
  content: string;
  /** 0.5 to 5 in steps of 0.5; null without a star rating. Where a rating is rounded down, 0.5 counts as 1. */
  rating: number | null;
  /** Ordered menus; null when none. */
  menus: string[] | null;
  /** An owner-direct reply counts as REPLIED; scheduled or failed replies as NOT_REPLIED. */
  reply_status: 'REPLIED' | 'NOT_REPLIED';
  /** Reply text; null when not replied. */
  reply_content: string | null;
  /** Reply time (KST); null when not replied. */
  reply_date: string | null;
  /** Dissatisfied review: the rating rounded down is in the brand's dissatisfaction range, or the AI judged the text negative. */
  is_critical: boolean;
  /** A reply was posted or a negative-review alert was sent. */
  is_handled: boolean;
};

/** An item of the review change feed: an UPSERT carries the review as it is now, a DELETE null. */
export type ReviewChange = {
  /** The review changed. */
  review_id: string;
  /** UPSERT: the review as it is now, to add or replace; DELETE: remove it from the copy. */
  change: 'DELETE' | 'UPSERT';
  /** As GET …/reviews/{review_id} returns it now; null for DELETE. */
  review: Review | null;
};

/** A row of review statistics: one variant per `group_by`, told apart by it. */
export type ReviewStatsRow =
  | {
      /** Reviews written in the period (sum of the days). */
      review_count: number;
      /** Of those, the ones replied when the aggregate was built. */
      reply_count: number;
      /** Review counts per star, by the rating rounded down (4.5 into four, 0.5 into one); reviews without a rating are in none. */
      rating_counts: {
        one: number;
        two: number;
        three: number;
        four: number;
        five: number;
      };
      /** Aggregation unit. */
      group_by: 'date';
      /** Aggregation day (KST). */
      date: string;
      /** Null for group_by=date. */
      platform_shop_id: null;
      /** Null for group_by=date. */
      shop_name: null;
      /** Null for group_by=date. */
      platform: null;
    }
  | {
      /** Reviews written in the period (sum of the days). */
      review_count: number;
      /** Of those, the ones replied when the aggregate was built. */
      reply_count: number;
      /** Review counts per star, by the rating rounded down (4.5 into four, 0.5 into one); reviews without a rating are in none. */
      rating_counts: {
        one: number;
        two: number;
        three: number;
        four: number;
        five: number;
      };
      /** Aggregation unit. */
      group_by: 'shop';
      /** Null for group_by=shop. */
      date: null;
      /** Platform-side shop id. */
      platform_shop_id: string;
      /** Shop name. */
      shop_name: string;
      /** A delivery or place-listing platform. */
      platform: 'BAEMIN' | 'CPEATS' | 'YOGIYO' | 'DDANGYO' | 'NAVER' | 'MUKKEBI';
    }
  | {
      /** Reviews written in the period (sum of the days). */
      review_count: number;
      /** Of those, the ones replied when the aggregate was built. */
      reply_count: number;
      /** Review counts per star, by the rating rounded down (4.5 into four, 0.5 into one); reviews without a rating are in none. */
      rating_counts: {
        one: number;
        two: number;
        three: number;
        four: number;
        five: number;
      };
      /** Aggregation unit. */
      group_by: 'platform';
      /** Null for group_by=platform. */
      date: null;
      /** Null for group_by=platform. */
      platform_shop_id: null;
      /** Null for group_by=platform. */
      shop_name: null;
      /** A delivery or place-listing platform. */
      platform: 'BAEMIN' | 'CPEATS' | 'YOGIYO' | 'DDANGYO' | 'NAVER' | 'MUKKEBI';
    };

/** A row of sales: one variant per `group_by`, told apart by it. */
export type SalesRow =
  | {
      /** Aggregation unit. */
      group_by: 'shop';
      /** Null for group_by=shop. */
      date: null;
      /** Null for group_by=shop. */
      week_start: null;
      /** Platform-side shop id. */
      platform_shop_id: string;
      /** Shop name. */
      shop_name: string;
      /** A platform whose sales are collected: BAEMIN, CPEATS or YOGIYO. */
      platform: 'BAEMIN' | 'CPEATS' | 'YOGIYO';
      /** The shop's brand user; null for a shop without one. */
      user: {
        user_code: string;
        display_name: string;
      } | null;
      /** Summed sales of the period, in won. */
      sales_amount: number;
    }
  | {
      /** Aggregation unit. */
      group_by: 'platform';
      /** Null for group_by=platform. */
      date: null;
      /** Null for group_by=platform. */
      week_start: null;
      /** Null for group_by=platform. */
      platform_shop_id: null;
      /** Null for group_by=platform. */
      shop_name: null;
      /** A platform whose sales are collected: BAEMIN, CPEATS or YOGIYO. */
      platform: 'BAEMIN' | 'CPEATS' | 'YOGIYO';
      /** Null for group_by=platform. */
      user: null;
      /** Summed sales of the period, in won. */
      sales_amount: number;
    }
  | {
      /** Aggregation unit. */
      group_by: 'user';
      /** Null for group_by=user. */
      date: null;
      /** Null for group_by=user. */
      week_start: null;
      /** Null for group_by=user. */
      platform_shop_id: null;
      /** Null for group_by=user. */
      shop_name: null;
      /** Null for group_by=user. */
      platform: null;
      /** The brand user of the group; null for the group of the shops without a user (D-10). */
      user: {
        user_code: string;
        display_name: string;
      } | null;
      /** Summed sales of the period, in won. */
      sales_amount: number;
    }
  | {
      /** Aggregation unit. */
      group_by: 'date';
      /** Aggregation day (KST). */
      date: string;
      /** Null for group_by=date. */
      week_start: null;
      /** Null for group_by=date. */
      platform_shop_id: null;
      /** Null for group_by=date. */
      shop_name: null;
      /** Null for group_by=date. */
      platform: null;
      /** Null for group_by=date. */
      user: null;
      /** Summed sales of the period, in won. */
      sales_amount: number;
    }
  | {
      /** Aggregation unit. */
      group_by: 'week';
      /** Null for group_by=week. */
      date: null;
      /** Monday of the week (KST). Only days inside the range are summed. */
      week_start: string;
      /** Null for group_by=week. */
      platform_shop_id: null;
      /** Null for group_by=week. */
      shop_name: null;
      /** Null for group_by=week. */
      platform: null;
      /** Null for group_by=week. */
      user: null;
      /** Summed sales of the period, in won. */
      sales_amount: number;
    };

/** An event a webhook endpoint receives (partner guide § Webhooks), told apart by `type`. */
export type WebhookEvent =
  | {
      type: 'review.upserted';
      /** When the event was made, KST (+09:00); the same on every retry. */
      timestamp: string;
      data: {
        /** The brand the event is about. */
        brand_code: string;
        /** The review added or changed. */
        review_id: string;
        /** As GET …/reviews/{review_id} returns it when the event was made. */
        review: Review;
        /** The feed position after this event: GET …/review-changes?cursor= continues from here. */
        cursor: string;
      };
    }
  | {
      type: 'review.deleted';
      /** When the event was made, KST (+09:00); the same on every retry. */
      timestamp: string;
      data: {
        /** The brand the event is about. */
        brand_code: string;
        /** The review removed: remove it from the copy. */
        review_id: string;
        review: null;
        /** The feed position after this event: GET …/review-changes?cursor= continues from here. */
        cursor: string;
      };
    }
  | {
      type: 'feed.expired';
      /** When the event was made, KST (+09:00); the same on every retry. */
      timestamp: string;
      data: {
        /** The brand the event is about. */
        brand_code: string;
      };
    }
  | {
      type: 'webhook.test';
      /** When the event was made, KST (+09:00); the same on every retry. */
      timestamp: string;
      data: {
        /** The endpoint tested. */
        webhook_id: string;
      };
    };

/** The parameters of each call: path and query parameters of the REST door in one object. */
export interface PartnerApiInputs {
  brands: {
    list:
      | {
          /**
           * Page number, from 1. Default 1.
           * @minimum 1
           */
          page?: number | undefined;
          /**
           * Items per page, 1 to 100. Default 20.
           * @minimum 1
           * @maximum 100
           */
          limit?: number | undefined;
        }
      | undefined;
  };
  users: {
    list: {
      /** Brand identifier, from GET /partner/v1/brands. */
      brand_code: string;
      /**
       * Page number, from 1. Default 1.
       * @minimum 1
       */
      page?: number | undefined;
      /**
       * Items per page, 1 to 100. Default 20.
       * @minimum 1
       * @maximum 100
       */
      limit?: number | undefined;
    };
    get: {
      /** Brand identifier, from GET /partner/v1/brands. */
      brand_code: string;
      /** User identifier, from the user list. */
      user_code: string;
    };
  };
  shops: {
    list: {
      /** Brand identifier, from GET /partner/v1/brands. */
      brand_code: string;
      /**
       * Page number, from 1. Default 1.
       * @minimum 1
       */
      page?: number | undefined;
      /**
       * Items per page, 1 to 100. Default 20.
       * @minimum 1
       * @maximum 100
       */
      limit?: number | undefined;
    };
  };
  reviews: {
    list: {
      /** Brand identifier, from GET /partner/v1/brands. */
      brand_code: string;
      /**
       * Opaque position from the rel="next" URL of the Link header of the previous answer: the page of the items after it, newest first. Only with the same filters and page absent or 1; otherwise 400.
       * @pattern ^[A-Za-z0-9_-]{1,200}$
       */
      cursor?: string | undefined;
      /**
       * Page number, from 1. Default 1.
       * @minimum 1
       */
      page?: number | undefined;
      /**
       * Items per page, 1 to 100. Default 20.
       * @minimum 1
       * @maximum 100
       */
      limit?: number | undefined;
      /**
       * Review date start, KST, inclusive (YYYY-MM-DD).
       * @format date (YYYY-MM-DD, a KST day)
       */
      from?: string | undefined;
      /**
       * Review date end, KST, inclusive (YYYY-MM-DD).
       * @format date (YYYY-MM-DD, a KST day)
       */
      to?: string | undefined;
      /**
       * Only this shop. The same id on two platforms names two shops: add platform to pick one.
       * @maxLength 100
       */
      platform_shop_id?: string | undefined;
      /** Only this platform. */
      platform?: 'BAEMIN' | 'CPEATS' | 'YOGIYO' | 'DDANGYO' | 'NAVER' | 'MUKKEBI' | undefined;
      /**
       * Lower bound, inclusive, on the rating rounded down (4.5 as 4, 0.5 as 1); a review without rating counts as 0.
       * @minimum 0
       * @maximum 5
       */
      rating_min?: number | undefined;
      /**
       * Upper bound, inclusive, on the rating rounded down; rating_max=0 returns only reviews without rating.
       * @minimum 0
       * @maximum 5
       */
      rating_max?: number | undefined;
      /** true or false: filter by reply state. */
      replied?: boolean | undefined;
      /** true: only dissatisfied reviews; false: exclude them. */
      critical?: boolean | undefined;
      /** true or false: filter by handled state. */
      handled?: boolean | undefined;
      /**
       * At most 50 characters; case-insensitive partial match in the content or in any menu name. % and _ are literal.
       * @maxLength 50
       */
      keyword?: string | undefined;
    };
    get: {
      /** Brand identifier, from GET /partner/v1/brands. */
      brand_code: string;
      /** Review identifier, from the review list. */
      review_id: string;
    };
    changes: {
      /** Brand identifier, from GET /partner/v1/brands. */
      brand_code: string;
      /**
       * Opaque position: next_cursor of an earlier answer for the same brand. Absent: start a walk.
       * @pattern ^[A-Za-z0-9_-]{1,300}$
       */
      cursor?: string | undefined;
      /**
       * Items per page, 1 to 100. Default 20.
       * @minimum 1
       * @maximum 100
       */
      limit?: number | undefined;
    };
  };
  reviewStats: {
    list: {
      /** Brand identifier, from GET /partner/v1/brands. */
      brand_code: string;
      /**
       * Page number, from 1. Default 1.
       * @minimum 1
       */
      page?: number | undefined;
      /**
       * Items per page, 1 to 100. Default 20.
       * @minimum 1
       * @maximum 100
       */
      limit?: number | undefined;
      /** Aggregation unit: date (default), shop or platform. */
      group_by?: 'date' | 'platform' | 'shop' | undefined;
      /** Only this platform. */
      platform?: 'BAEMIN' | 'CPEATS' | 'YOGIYO' | 'DDANGYO' | 'NAVER' | 'MUKKEBI' | undefined;
      /**
       * Only this shop. The same id on two platforms names two shops: add platform to pick one.
       * @maxLength 100
       */
      platform_shop_id?: string | undefined;
      /**
       * Start day, KST, inclusive (YYYY-MM-DD). Default: 30 days before to.
       * @format date (YYYY-MM-DD, a KST day)
       */
      from?: string | undefined;
      /**
       * End day, KST, inclusive (YYYY-MM-DD). Default: today (KST).
       * @format date (YYYY-MM-DD, a KST day)
       */
      to?: string | undefined;
    };
  };
  sales: {
    list: {
      /** Brand identifier, from GET /partner/v1/brands. */
      brand_code: string;
      /**
       * Page number, from 1. Default 1.
       * @minimum 1
       */
      page?: number | undefined;
      /**
       * Items per page, 1 to 100. Default 20.
       * @minimum 1
       * @maximum 100
       */
      limit?: number | undefined;
      /** Aggregation unit: shop (default), platform, user, date or week. */
      group_by?: 'date' | 'platform' | 'user' | 'shop' | 'week' | undefined;
      /** Only this platform: BAEMIN, CPEATS or YOGIYO. */
      platform?: 'BAEMIN' | 'CPEATS' | 'YOGIYO' | undefined;
      /**
       * Only this shop. The same id on two platforms names two shops: add platform to pick one.
       * @maxLength 100
       */
      platform_shop_id?: string | undefined;
      /**
       * Start day, KST, inclusive (YYYY-MM-DD). Default: 30 days before to.
       * @format date (YYYY-MM-DD, a KST day)
       */
      from?: string | undefined;
      /**
       * End day, KST, inclusive (YYYY-MM-DD). Default: today (KST).
       * @format date (YYYY-MM-DD, a KST day)
       */
      to?: string | undefined;
    };
  };
  webhooks: {
    list:
      | {
          /**
           * Page number, from 1. Default 1.
           * @minimum 1
           */
          page?: number | undefined;
          /**
           * Items per page, 1 to 100. Default 20.
           * @minimum 1
           * @maximum 100
           */
          limit?: number | undefined;
        }
      | undefined;
    deliveries: {
      /**
       * The endpoint, from GET /partner/v1/webhooks.
       * @maxLength 64
       */
      webhook_id: string;
      /**
       * Opaque position: next_cursor of an earlier answer for the same endpoint. Absent: the newest first.
       * @maxLength 200
       */
      cursor?: string | undefined;
      /**
       * Items per page, 1 to 100. Default 20.
       * @minimum 1
       * @maximum 100
       */
      limit?: number | undefined;
    };
  };
}

/** What each call resolves to: the `data` of the success envelope. */
export interface PartnerApiOutputs {
  brands: {
    list: {
      items: Brand[];
      /** The page returned. */
      page: number;
      /** The page size asked for. */
      limit: number;
      /** Whether a further page has at least one item. */
      has_next: boolean;
    };
  };
  users: {
    list: {
      items: User[];
      /** The page returned. */
      page: number;
      /** The page size asked for. */
      limit: number;
      /** Whether a further page has at least one item. */
      has_next: boolean;
    };
    get: User;
  };
  shops: {
    list: {
      items: Shop[];
      /** The page returned. */
      page: number;
      /** The page size asked for. */
      limit: number;
      /** Whether a further page has at least one item. */
      has_next: boolean;
    };
  };
  reviews: {
    list: {
      items: Review[];
      /** The page returned. */
      page: number;
      /** The page size asked for. */
      limit: number;
      /** Whether a further page has at least one item. */
      has_next: boolean;
    };
    get: Review;
    changes: {
      items: ReviewChange[];
      /** The page size asked for. */
      limit: number;
      /** Whether more can be read now; false: caught up, call again later. */
      has_next: boolean;
      /** Where to continue; always present. */
      next_cursor: string;
    };
  };
  reviewStats: {
    list: {
      items: ReviewStatsRow[];
      /** The page returned. */
      page: number;
      /** The page size asked for. */
      limit: number;
      /** Whether a further page has at least one item. */
      has_next: boolean;
    };
  };
  sales: {
    list: {
      items: SalesRow[];
      /** The page returned. */
      page: number;
      /** The page size asked for. */
      limit: number;
      /** Whether a further page has at least one item. */
      has_next: boolean;
    };
  };
  webhooks: {
    list: {
      items: {
        /** The endpoint’s id (wh_…), as the operator gave it to you. */
        webhook_id: string;
        /** Where events are delivered. */
        url: string;
        /** The brands it covers; null: every brand of yours, brands added later included. */
        brand_codes: string[] | null;
        /** Only upserts of critical reviews are delivered, and no deletions. */
        critical_only: boolean;
        /** DISABLED: nothing is delivered until the operator enables it again. */
        status: 'ACTIVE' | 'DISABLED';
        /** Why it is DISABLED; null while ACTIVE. */
        disabled_reason: string | null;
        /** The last delivery answered 2xx (KST); null if none. */
        last_success_at: string | null;
        /** The first failed attempt since the last success (KST); null when nothing has failed since. */
        failing_since: string | null;
        /** When the next pending event is due (KST); null when nothing is pending. */
        next_attempt_at: string | null;
        /** Age in seconds of the oldest event not yet delivered; 0 when everything is delivered. */
        lag_seconds: number;
      }[];
      /** The page returned. */
      page: number;
      /** The page size asked for. */
      limit: number;
      /** Whether a further page has at least one item. */
      has_next: boolean;
    };
    deliveries: {
      items: {
        /** The event’s id: the webhook-id header of every attempt at it. */
        event_id: string;
        /** review.upserted, review.deleted, feed.expired or webhook.test. */
        type: string;
        /** The review the event is about; null for other events. */
        review_id: string | null;
        /** 1 for the first attempt at the event, then 2, 3, … */
        attempt: number;
        /** Your receiver’s HTTP status; null when no answer came. */
        status_code: number | null;
        /** Why it failed (or the start of your answer, at most 1 KB); null on a 2xx. */
        error: string | null;
        /** How long the attempt took. */
        duration_ms: number;
        /** When it was made (KST). */
        attempted_at: string;
        /** When the event is tried again (KST); null once delivered or given up. */
        next_attempt_at: string | null;
      }[];
      /** The page size asked for. */
      limit: number;
      /** Whether older attempts follow. */
      has_next: boolean;
      /** Where the next page starts; always present. With has_next false it reads nothing new: newer attempts come first, not after it. */
      next_cursor: string;
    };
  };
}

/** The path of every procedure on the tRPC transport (`/partner/v1/trpc/<path>`), in the router's order. */
export const PROCEDURES = [
  'brands.list',
  'users.list',
  'users.get',
  'shops.list',
  'reviews.list',
  'reviews.get',
  'reviews.changes',
  'reviewStats.list',
  'sales.list',
  'webhooks.list',
  'webhooks.deliveries',
] as const;

/** The procedures that are feeds: each call walks its pages by their `next_cursor` (a `ChangeFeed`). */
export const FEEDS = ['reviews.changes', 'webhooks.deliveries'] as const;

/** The parameter names each call takes: the client refuses any other before sending (D-11 ignores them). */
export const PARAMETERS = {
  'brands.list': ['page', 'limit'],
  'users.list': ['brand_code', 'page', 'limit'],
  'users.get': ['brand_code', 'user_code'],
  'shops.list': ['brand_code', 'page', 'limit'],
  'reviews.list': [
    'brand_code',
    'cursor',
    'page',
    'limit',
    'from',
    'to',
    'platform_shop_id',
    'platform',
    'rating_min',
    'rating_max',
    'replied',
    'critical',
    'handled',
    'keyword',
  ],
  'reviews.get': ['brand_code', 'review_id'],
  'reviews.changes': ['brand_code', 'cursor', 'limit'],
  'reviewStats.list': ['brand_code', 'page', 'limit', 'group_by', 'platform', 'platform_shop_id', 'from', 'to'],
  'sales.list': ['brand_code', 'page', 'limit', 'group_by', 'platform', 'platform_shop_id', 'from', 'to'],
  'webhooks.list': ['page', 'limit'],
  'webhooks.deliveries': ['webhook_id', 'cursor', 'limit'],
} as const;

/** Every read of the API, grouped as the router groups them. The last argument of each: per-call options. */
export interface PartnerClient {
  brands: {
    /** List brands: `GET /partner/v1/brands`. Resolves to the envelope's `data`; `.withResponse()` adds the request id, rate limit and next cursor. */
    list(
      input?: PartnerApiInputs['brands']['list'],
      options?: RequestOptions,
    ): APIPromise<PartnerApiOutputs['brands']['list']>;
  };
  users: {
    /** List users of a brand: `GET /partner/v1/brands/{brand_code}/users`. Resolves to the envelope's `data`; `.withResponse()` adds the request id, rate limit and next cursor. */
    list(
      input: PartnerApiInputs['users']['list'],
      options?: RequestOptions,
    ): APIPromise<PartnerApiOutputs['users']['list']>;
    /** Get one user: `GET /partner/v1/brands/{brand_code}/users/{user_code}`. Resolves to the envelope's `data`; `.withResponse()` adds the request id, rate limit and next cursor. */
    get(
      input: PartnerApiInputs['users']['get'],
      options?: RequestOptions,
    ): APIPromise<PartnerApiOutputs['users']['get']>;
  };
  shops: {
    /** List shops of a brand: `GET /partner/v1/brands/{brand_code}/shops`. Resolves to the envelope's `data`; `.withResponse()` adds the request id, rate limit and next cursor. */
    list(
      input: PartnerApiInputs['shops']['list'],
      options?: RequestOptions,
    ): APIPromise<PartnerApiOutputs['shops']['list']>;
  };
  reviews: {
    /** List reviews of a brand: `GET /partner/v1/brands/{brand_code}/reviews`. Resolves to the envelope's `data`; `.withResponse()` adds the request id, rate limit and next cursor. */
    list(
      input: PartnerApiInputs['reviews']['list'],
      options?: RequestOptions,
    ): APIPromise<PartnerApiOutputs['reviews']['list']>;
    /** Get one review: `GET /partner/v1/brands/{brand_code}/reviews/{review_id}`. Resolves to the envelope's `data`; `.withResponse()` adds the request id, rate limit and next cursor. */
    get(
      input: PartnerApiInputs['reviews']['get'],
      options?: RequestOptions,
    ): APIPromise<PartnerApiOutputs['reviews']['get']>;
    /** Review changes of a brand: `GET /partner/v1/brands/{brand_code}/review-changes`. An async iterator over the items after `cursor` (from the start without one), page by page until `has_next` is false; `.cursor` is where to resume, `.nextPage()` reads one page. */
    changes(
      input: PartnerApiInputs['reviews']['changes'],
      options?: RequestOptions,
    ): ChangeFeed<PartnerApiOutputs['reviews']['changes']>;
  };
  reviewStats: {
    /** Review statistics of a brand: `GET /partner/v1/brands/{brand_code}/review-stats`. Resolves to the envelope's `data`; `.withResponse()` adds the request id, rate limit and next cursor. */
    list<GroupBy extends NonNullable<PartnerApiInputs['reviewStats']['list']['group_by']> = 'date'>(
      input: PartnerApiInputs['reviewStats']['list'] & { group_by?: GroupBy | undefined },
      options?: RequestOptions,
    ): APIPromise<NarrowedPage<PartnerApiOutputs['reviewStats']['list'], GroupBy>>;
  };
  sales: {
    /** Sales of a brand: `GET /partner/v1/brands/{brand_code}/sales`. Resolves to the envelope's `data`; `.withResponse()` adds the request id, rate limit and next cursor. */
    list<GroupBy extends NonNullable<PartnerApiInputs['sales']['list']['group_by']> = 'shop'>(
      input: PartnerApiInputs['sales']['list'] & { group_by?: GroupBy | undefined },
      options?: RequestOptions,
    ): APIPromise<NarrowedPage<PartnerApiOutputs['sales']['list'], GroupBy>>;
  };
  webhooks: {
    /** List webhook endpoints: `GET /partner/v1/webhooks`. Resolves to the envelope's `data`; `.withResponse()` adds the request id, rate limit and next cursor. */
    list(
      input?: PartnerApiInputs['webhooks']['list'],
      options?: RequestOptions,
    ): APIPromise<PartnerApiOutputs['webhooks']['list']>;
    /** Delivery attempts of a webhook endpoint: `GET /partner/v1/webhooks/{webhook_id}/deliveries`. An async iterator over the items after `cursor` (from the start without one), page by page until `has_next` is false; `.cursor` is where to resume, `.nextPage()` reads one page. */
    deliveries(
      input: PartnerApiInputs['webhooks']['deliveries'],
      options?: RequestOptions,
    ): ChangeFeed<PartnerApiOutputs['webhooks']['deliveries']>;
  };
}
