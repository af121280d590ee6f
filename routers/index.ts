import { createCallerFactory, router } from '../server/trpc';
import { brandsRouter } from './brands';
import { reviewStatsRouter } from './reviewStats';
import { reviewsRouter } from './reviews';
import { salesRouter } from './sales';
import { shopsRouter } from './shops';
import { usersRouter } from './users';

/** The whole API: composition only. Its type is the SDK's contract. */
export const appRouter = router({
  brands: brandsRouter,
  users: usersRouter,
  shops: shopsRouter,
  reviews: reviewsRouter,
  reviewStats: reviewStatsRouter,
  sales: salesRouter,
});

export type AppRouter = typeof appRouter;

/** Procedure-level calls without HTTP (tests, scripts): the same middleware as both HTTP doors. */
export const createCaller = createCallerFactory(appRouter);
