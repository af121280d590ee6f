-- Every list read is one brand's (partner guide § List reviews of a brand), but the index on partner_grams
-- (migration 0005) holds every brand's reviews: a short keyword's posting lists (D-8) grow with the whole
-- database, and the brand is filtered only after they are read. partner_brand_grams lists the same
-- characters and pairs, each prefixed by the review's brand id and ':'. The id is digits only, so the text
-- before the first ':' is the brand whatever the gram holds and no two brands share an element: a GIN
-- index on it keeps one posting list per brand and gram, as long as that brand's reviews holding it. The
-- grams are partner_grams' own (lower() and the pairs stay defined once), and the ILIKE stays the exact
-- recheck (db/queries/reviews/rules.ts), so answers do not change. ARRAY(subquery) keeps partner_grams'
-- order and gives '{}' for a review without text.
-- COST 1000 as for partner_grams (migration 0007): an evaluation on a row computes all of its grams, and a
-- lower price would put it before the ILIKE in a row filter. The sublink keeps it from being inlined, so
-- the planner sees that price. partner_grams is named with its schema: index builds, ANALYZE and VACUUM
-- evaluate the expression with search_path set to pg_catalog (PostgreSQL 17 and later, so PGlite).
CREATE OR REPLACE FUNCTION partner_brand_grams(brand_id integer, content text, menus text[]) RETURNS text[]
  LANGUAGE sql IMMUTABLE PARALLEL SAFE COST 1000
  AS $$
    SELECT ARRAY(SELECT brand_id::text || ':' || gram FROM unnest(public.partner_grams(content, menus)) AS grams(gram))
  $$;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS reviews_brand_grams_idx ON reviews USING gin (partner_brand_grams(brand_id, content, menus));
--> statement-breakpoint
-- Nothing reads the index on partner_grams alone; the function stays, partner_brand_grams uses it.
DROP INDEX IF EXISTS reviews_grams_idx;
--> statement-breakpoint
-- The planner estimates `partner_brand_grams(…) @> …` from the statistics of the new index's expression.
ANALYZE reviews;
