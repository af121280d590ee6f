CREATE TABLE "aggregate_changes" (
	"shop_id" integer NOT NULL,
	"day" date
);
--> statement-breakpoint
ALTER TABLE "aggregate_runs" ADD COLUMN "kind" text;