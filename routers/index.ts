import { createCallerFactory, router } from '../server/trpc/procedures';
import { list as listBrands } from './brands/list';
import { list as listReviewStats } from './reviewStats/list';
import { changes as reviewChanges } from './reviews/changes';
import { get as getReview } from './reviews/get';
import { list as listReviews } from './reviews/list';
import { list as listSales } from './sales/list';
import { list as listShops } from './shops/list';
import { get as getUser } from './users/get';
import { list as listUsers } from './users/list';
import { deliveries as webhookDeliveries } from './webhooks/deliveries';
import { list as listWebhooks } from './webhooks/list';

/** The whole API: composition only. Its type is the SDK's contract. */
export const appRouter = router({
  brands: { list: listBrands },
  users: { list: listUsers, get: getUser },
  shops: { list: listShops },
  reviews: { list: listReviews, get: getReview, changes: reviewChanges },
  reviewStats: { list: listReviewStats },
  sales: { list: listSales },
  webhooks: { list: listWebhooks, deliveries: webhookDeliveries },
});

export type AppRouter = typeof appRouter;

/** Procedure-level calls without HTTP (tests, scripts): the same middleware as both HTTP doors. */
export const createCaller = createCallerFactory(appRouter);
