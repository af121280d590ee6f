-- Running totals per shop in day order (issue 8): review-stats and sales by shop, platform and user read
-- two rows per shop (the last on or before `to`, the last before `from`) instead of every day of the
-- range. The aggregate job writes them with each rebuild (db/aggregate.ts); here the rows already built
-- get them too, so the reports are right from the moment the new code runs, without waiting for the next
-- daily run (which skips a day already covered). The defaults only serve the fill and are dropped:
-- every writer gives the columns.
ALTER TABLE "review_stats_daily" ADD COLUMN "running_rows" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "review_stats_daily" ADD COLUMN "running_review_count" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "review_stats_daily" ADD COLUMN "running_reply_count" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "review_stats_daily" ADD COLUMN "running_rating_one" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "review_stats_daily" ADD COLUMN "running_rating_two" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "review_stats_daily" ADD COLUMN "running_rating_three" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "review_stats_daily" ADD COLUMN "running_rating_four" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "review_stats_daily" ADD COLUMN "running_rating_five" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "sales_daily" ADD COLUMN "running_rows" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "sales_daily" ADD COLUMN "running_sales_amount" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
UPDATE "review_stats_daily" AS d
SET "running_rows" = r.running_rows,
    "running_review_count" = r.running_review_count,
    "running_reply_count" = r.running_reply_count,
    "running_rating_one" = r.running_rating_one,
    "running_rating_two" = r.running_rating_two,
    "running_rating_three" = r.running_rating_three,
    "running_rating_four" = r.running_rating_four,
    "running_rating_five" = r.running_rating_five
FROM (
  SELECT "shop_id", "day",
         row_number() OVER w AS running_rows,
         sum("review_count") OVER w AS running_review_count,
         sum("reply_count") OVER w AS running_reply_count,
         sum("rating_one") OVER w AS running_rating_one,
         sum("rating_two") OVER w AS running_rating_two,
         sum("rating_three") OVER w AS running_rating_three,
         sum("rating_four") OVER w AS running_rating_four,
         sum("rating_five") OVER w AS running_rating_five
  FROM "review_stats_daily"
  WINDOW w AS (PARTITION BY "shop_id" ORDER BY "day" ROWS UNBOUNDED PRECEDING)
) AS r
WHERE d."shop_id" = r."shop_id" AND d."day" = r."day";--> statement-breakpoint
UPDATE "sales_daily" AS d
SET "running_rows" = r.running_rows, "running_sales_amount" = r.running_sales_amount
FROM (
  SELECT "shop_id", "day",
         row_number() OVER w AS running_rows,
         sum("sales_amount") OVER w AS running_sales_amount
  FROM "sales_daily"
  WINDOW w AS (PARTITION BY "shop_id" ORDER BY "day" ROWS UNBOUNDED PRECEDING)
) AS r
WHERE d."shop_id" = r."shop_id" AND d."day" = r."day";--> statement-breakpoint
ALTER TABLE "review_stats_daily" ALTER COLUMN "running_rows" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "review_stats_daily" ALTER COLUMN "running_review_count" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "review_stats_daily" ALTER COLUMN "running_reply_count" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "review_stats_daily" ALTER COLUMN "running_rating_one" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "review_stats_daily" ALTER COLUMN "running_rating_two" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "review_stats_daily" ALTER COLUMN "running_rating_three" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "review_stats_daily" ALTER COLUMN "running_rating_four" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "review_stats_daily" ALTER COLUMN "running_rating_five" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "sales_daily" ALTER COLUMN "running_rows" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "sales_daily" ALTER COLUMN "running_sales_amount" DROP DEFAULT;--> statement-breakpoint
-- The fill rewrote every row; fresh statistics for the planner (no autovacuum on this machine, issue 8).
ANALYZE "review_stats_daily", "sales_daily";
