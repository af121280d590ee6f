-- The review change feed notes an UPDATE per row (D-26): most updates write one review (a reply posted, an
-- alert sent), and a row trigger behind a WHEN clause costs such a write less than a statement trigger
-- joining its transition tables (BENCHMARKS.md § Review change feed). INSERT and DELETE, often in bulk,
-- stay statement triggers.
DROP TRIGGER review_changes_note_update ON reviews;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION review_changes_note() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO review_changes (brand_id, review_code) SELECT brand_id, review_code FROM new_rows;
  ELSE
    INSERT INTO review_changes (brand_id, review_code) SELECT brand_id, review_code FROM old_rows;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
-- A review that left a brand (or changed its code) is also noted where it was, so that brand's feed sends
-- a DELETE.
CREATE FUNCTION review_changes_note_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO review_changes (brand_id, review_code) VALUES (NEW.brand_id, NEW.review_code);
  IF (OLD.brand_id, OLD.review_code) IS DISTINCT FROM (NEW.brand_id, NEW.review_code) THEN
    INSERT INTO review_changes (brand_id, review_code) VALUES (OLD.brand_id, OLD.review_code);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
-- An UPDATE that leaves a row as it was is no change.
CREATE TRIGGER review_changes_note_update AFTER UPDATE ON reviews
  FOR EACH ROW WHEN (OLD.* IS DISTINCT FROM NEW.*) EXECUTE FUNCTION review_changes_note_update();
