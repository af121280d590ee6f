-- The key and brand cache (server/trpc/cache/, D-14, D-21) holds rows of api_keys, partners and brands in each
-- instance's memory. Every statement that writes them names what it wrote on the channel partner_api_cache
-- (NOTIFY, sent at its commit, in commit order): a key by its hash, a partner by its id (its keys' state),
-- a brand by its code and its partner (that partner's list). A statement of more than 100 rows, or a
-- TRUNCATE, names nothing: every instance drops everything it holds. Statement triggers with transition
-- tables, as the review change feed's: one notice per statement.
CREATE FUNCTION cache_notice() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  written jsonb;
  notice text;
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    PERFORM pg_notify('partner_api_cache', '{"all":true}');
    RETURN NULL;
  END IF;
  IF TG_OP = 'INSERT' THEN
    SELECT jsonb_agg(to_jsonb(n)) INTO written FROM (SELECT * FROM new_rows LIMIT 101) n;
  ELSIF TG_OP = 'DELETE' THEN
    SELECT jsonb_agg(to_jsonb(o)) INTO written FROM (SELECT * FROM old_rows LIMIT 101) o;
  ELSE
    SELECT jsonb_agg(r) INTO written
      FROM (SELECT to_jsonb(n) AS r FROM (SELECT * FROM new_rows LIMIT 101) n
            UNION ALL SELECT to_jsonb(o) FROM (SELECT * FROM old_rows LIMIT 101) o) AS both_sides;
  END IF;
  IF written IS NULL THEN
    RETURN NULL;
  END IF;
  -- An update's rows come twice (before and after).
  IF jsonb_array_length(written) > (CASE TG_OP WHEN 'UPDATE' THEN 200 ELSE 100 END) THEN
    notice := '{"all":true}';
  ELSIF TG_TABLE_NAME = 'api_keys' THEN
    notice := jsonb_build_object('keys', (SELECT jsonb_agg(DISTINCT w->>'key_hash') FROM jsonb_array_elements(written) w));
  ELSIF TG_TABLE_NAME = 'partners' THEN
    notice := jsonb_build_object('partners', (SELECT jsonb_agg(DISTINCT (w->>'id')::int) FROM jsonb_array_elements(written) w));
  ELSE
    notice := jsonb_build_object(
      'brands', (SELECT jsonb_agg(DISTINCT w->>'brand_code') FROM jsonb_array_elements(written) w),
      'brand_partners', (SELECT jsonb_agg(DISTINCT (w->>'partner_id')::int) FROM jsonb_array_elements(written) w));
  END IF;
  PERFORM pg_notify('partner_api_cache', notice);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER cache_notice_insert AFTER INSERT ON api_keys
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cache_notice();
--> statement-breakpoint
CREATE TRIGGER cache_notice_update AFTER UPDATE ON api_keys
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cache_notice();
--> statement-breakpoint
CREATE TRIGGER cache_notice_delete AFTER DELETE ON api_keys
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION cache_notice();
--> statement-breakpoint
CREATE TRIGGER cache_notice_truncate AFTER TRUNCATE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION cache_notice();
--> statement-breakpoint
-- A partner's row holds no key, but its keys' state (is_active): an update or delete names the partner.
CREATE TRIGGER cache_notice_update AFTER UPDATE ON partners
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cache_notice();
--> statement-breakpoint
CREATE TRIGGER cache_notice_delete AFTER DELETE ON partners
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION cache_notice();
--> statement-breakpoint
CREATE TRIGGER cache_notice_truncate AFTER TRUNCATE ON partners
  FOR EACH STATEMENT EXECUTE FUNCTION cache_notice();
--> statement-breakpoint
CREATE TRIGGER cache_notice_insert AFTER INSERT ON brands
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cache_notice();
--> statement-breakpoint
CREATE TRIGGER cache_notice_update AFTER UPDATE ON brands
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cache_notice();
--> statement-breakpoint
CREATE TRIGGER cache_notice_delete AFTER DELETE ON brands
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION cache_notice();
--> statement-breakpoint
CREATE TRIGGER cache_notice_truncate AFTER TRUNCATE ON brands
  FOR EACH STATEMENT EXECUTE FUNCTION cache_notice();
