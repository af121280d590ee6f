CREATE TABLE "review_feed_history" (
	"id" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"history" uuid DEFAULT gen_random_uuid() NOT NULL,
	"cursor_key" text NOT NULL,
	CONSTRAINT "review_feed_history_one_row" CHECK ("review_feed_history"."id")
);
--> statement-breakpoint
-- The cursor key is made here, once per database, from PostgreSQL's strong random source: every instance
-- reads the same key without setup, and a dump restored elsewhere keeps its cursors genuine (they answer
-- 410 there by the system identifier, not 400).
INSERT INTO "review_feed_history" ("cursor_key")
  VALUES (encode(sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')), 'base64'));
