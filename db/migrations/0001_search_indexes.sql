-- Keyword search (spec §4.5, D-8): trigram GIN indexes, used by ILIKE on content and on the menu names.
-- array_to_string is STABLE, so an IMMUTABLE wrapper makes the menu text indexable; queries must use
-- the same expression (db/queries/reviews/rules.ts).
CREATE EXTENSION IF NOT EXISTS pg_trgm;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION partner_menus_text(menus text[]) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT array_to_string(menus, E'\n') $$;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS reviews_content_trgm_idx ON reviews USING gin (content gin_trgm_ops);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS reviews_menus_trgm_idx ON reviews USING gin (partner_menus_text(menus) gin_trgm_ops);
