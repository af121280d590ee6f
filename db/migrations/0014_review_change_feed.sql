CREATE TABLE "review_changes" (
	"seq" bigserial NOT NULL,
	"xid" bigint DEFAULT (pg_current_xact_id()::text::bigint) NOT NULL,
	"brand_id" integer NOT NULL,
	"review_code" text NOT NULL,
	"changed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "review_changes_pk" PRIMARY KEY("brand_id","xid","seq")
);
--> statement-breakpoint
CREATE TABLE "review_changes_pruned" (
	"brand_id" integer PRIMARY KEY NOT NULL,
	"xid" bigint NOT NULL,
	"seq" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "brands" ADD COLUMN "feed_epoch" integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
-- The review change feed's record (D-26): every statement that writes reviews notes, in its own
-- transaction, each review it wrote under the brand it belongs to; a review that left a brand (or changed
-- its code) is also noted where it was, so that brand's feed sends a DELETE. An UPDATE that leaves a row
-- as it was is no change. Statement triggers with transition tables: one set-wise insert per statement.
CREATE FUNCTION review_changes_note() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO review_changes (brand_id, review_code) SELECT brand_id, review_code FROM new_rows;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO review_changes (brand_id, review_code) SELECT brand_id, review_code FROM old_rows;
  ELSE
    INSERT INTO review_changes (brand_id, review_code)
      SELECT n.brand_id, n.review_code FROM new_rows n JOIN old_rows o ON o.id = n.id WHERE o IS DISTINCT FROM n
      UNION ALL
      SELECT o.brand_id, o.review_code FROM new_rows n JOIN old_rows o ON o.id = n.id
      WHERE (o.brand_id, o.review_code) IS DISTINCT FROM (n.brand_id, n.review_code);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER review_changes_note_insert AFTER INSERT ON reviews
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION review_changes_note();
--> statement-breakpoint
CREATE TRIGGER review_changes_note_update AFTER UPDATE ON reviews
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION review_changes_note();
--> statement-breakpoint
CREATE TRIGGER review_changes_note_delete AFTER DELETE ON reviews
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION review_changes_note();
--> statement-breakpoint
-- A review carries its shop's name, platform and platform_shop_id: a change to them changes every review of
-- the shop, and each is noted as written.
CREATE FUNCTION review_changes_note_shops() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO review_changes (brand_id, review_code)
    SELECT r.brand_id, r.review_code
    FROM new_rows n JOIN old_rows o ON o.id = n.id JOIN reviews r ON r.shop_id = n.id
    WHERE (o.name, o.platform, o.platform_shop_id) IS DISTINCT FROM (n.name, n.platform, n.platform_shop_id);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER review_changes_note_shops AFTER UPDATE ON shops
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION review_changes_note_shops();
--> statement-breakpoint
-- A new dissatisfaction range changes is_critical of many reviews at once without writing them: every
-- cursor of the brand starts again (410).
CREATE FUNCTION review_feed_range_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF (NEW.critical_star_min, NEW.critical_star_max) IS DISTINCT FROM (OLD.critical_star_min, OLD.critical_star_max) THEN
    NEW.feed_epoch := OLD.feed_epoch + 1;
  END IF;
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER review_feed_range_changed BEFORE UPDATE ON brands
  FOR EACH ROW EXECUTE FUNCTION review_feed_range_changed();
--> statement-breakpoint
-- TRUNCATE has no rows to note: every cursor of every brand starts again.
CREATE FUNCTION review_feed_restart() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE brands SET feed_epoch = feed_epoch + 1;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER review_feed_restart_reviews AFTER TRUNCATE ON reviews
  FOR EACH STATEMENT EXECUTE FUNCTION review_feed_restart();
--> statement-breakpoint
CREATE TRIGGER review_feed_restart_changes AFTER TRUNCATE ON review_changes
  FOR EACH STATEMENT EXECUTE FUNCTION review_feed_restart();
