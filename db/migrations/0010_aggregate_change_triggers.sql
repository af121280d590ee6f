-- The change log of the incremental daily build (D-6): every write to what the aggregate reads notes the
-- (shop, KST day) it touched in aggregate_changes, in the writer's own transaction, so a build sees a
-- change exactly when it sees the data. Statement triggers with transition tables: one INSERT … SELECT
-- DISTINCT per statement, so a bulk load of a million rows adds one set-wise insert, not a million.
-- A day is the KST day of written_at, as db/kst.ts (kstDayOf) computes it; a null day means every day of
-- the shop.
CREATE FUNCTION aggregate_note_reviews() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO aggregate_changes (shop_id, day)
      SELECT DISTINCT shop_id, (written_at AT TIME ZONE 'Asia/Seoul')::date FROM new_rows;
  ELSIF TG_OP = 'UPDATE' THEN
    -- A reply posted later changes an old day; a moved review changes the day it left and the one it joined.
    INSERT INTO aggregate_changes (shop_id, day)
      SELECT shop_id, (written_at AT TIME ZONE 'Asia/Seoul')::date FROM new_rows
      UNION
      SELECT shop_id, (written_at AT TIME ZONE 'Asia/Seoul')::date FROM old_rows;
  ELSE
    INSERT INTO aggregate_changes (shop_id, day)
      SELECT DISTINCT shop_id, (written_at AT TIME ZONE 'Asia/Seoul')::date FROM old_rows;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION aggregate_note_sales() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO aggregate_changes (shop_id, day) SELECT DISTINCT shop_id, day FROM new_rows;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO aggregate_changes (shop_id, day)
      SELECT shop_id, day FROM new_rows UNION SELECT shop_id, day FROM old_rows;
  ELSE
    INSERT INTO aggregate_changes (shop_id, day) SELECT DISTINCT shop_id, day FROM old_rows;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
-- A shop's brand, platform (sales count on some platforms only) and link time decide which of its rows
-- the aggregate holds and under which brand: a change to any of them rebuilds all its days. Its name or
-- status do not enter the aggregate. A new shop has no reviews yet; its history notes itself as it lands.
CREATE FUNCTION aggregate_note_shops() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    INSERT INTO aggregate_changes (shop_id, day)
      SELECT DISTINCT o.id, NULL::date FROM old_rows o JOIN new_rows n ON n.id = o.id
      WHERE (o.brand_id, o.platform, o.linked_at) IS DISTINCT FROM (n.brand_id, n.platform, n.linked_at);
  ELSE
    INSERT INTO aggregate_changes (shop_id, day) SELECT DISTINCT id, NULL::date FROM old_rows;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
-- TRUNCATE has no transition table: every shop is noted whole.
CREATE FUNCTION aggregate_note_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO aggregate_changes (shop_id, day) SELECT id, NULL::date FROM shops;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER aggregate_note_reviews_insert AFTER INSERT ON reviews
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION aggregate_note_reviews();
--> statement-breakpoint
CREATE TRIGGER aggregate_note_reviews_update AFTER UPDATE ON reviews
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION aggregate_note_reviews();
--> statement-breakpoint
CREATE TRIGGER aggregate_note_reviews_delete AFTER DELETE ON reviews
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION aggregate_note_reviews();
--> statement-breakpoint
CREATE TRIGGER aggregate_note_reviews_truncate AFTER TRUNCATE ON reviews
  FOR EACH STATEMENT EXECUTE FUNCTION aggregate_note_truncate();
--> statement-breakpoint
CREATE TRIGGER aggregate_note_sales_insert AFTER INSERT ON sales_snapshots
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION aggregate_note_sales();
--> statement-breakpoint
CREATE TRIGGER aggregate_note_sales_update AFTER UPDATE ON sales_snapshots
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION aggregate_note_sales();
--> statement-breakpoint
CREATE TRIGGER aggregate_note_sales_delete AFTER DELETE ON sales_snapshots
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION aggregate_note_sales();
--> statement-breakpoint
CREATE TRIGGER aggregate_note_sales_truncate AFTER TRUNCATE ON sales_snapshots
  FOR EACH STATEMENT EXECUTE FUNCTION aggregate_note_truncate();
--> statement-breakpoint
CREATE TRIGGER aggregate_note_shops_update AFTER UPDATE ON shops
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION aggregate_note_shops();
--> statement-breakpoint
CREATE TRIGGER aggregate_note_shops_delete AFTER DELETE ON shops
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION aggregate_note_shops();
--> statement-breakpoint
-- Rows already written for today or later are in no build yet and were noted by no trigger: noted here,
-- so the build that first covers their day takes them (earlier days are every build's, full or not).
INSERT INTO aggregate_changes (shop_id, day)
  SELECT DISTINCT shop_id, (written_at AT TIME ZONE 'Asia/Seoul')::date FROM reviews
  WHERE written_at >= (now() AT TIME ZONE 'Asia/Seoul')::date::timestamp AT TIME ZONE 'Asia/Seoul';
--> statement-breakpoint
INSERT INTO aggregate_changes (shop_id, day)
  SELECT DISTINCT shop_id, day FROM sales_snapshots WHERE day >= (now() AT TIME ZONE 'Asia/Seoul')::date;
