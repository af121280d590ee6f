-- Keywords of one or two characters (spec §4.5, D-8) have no trigram, so pg_trgm cannot narrow them
-- (issue 8: a 2-character keyword scanned the whole brand). partner_grams lists the distinct lower-cased
-- characters and character pairs of the content and of each menu name (pairs never span two menus); a GIN
-- index on it finds the reviews holding every character and pair of a short keyword. Plain SQL, so
-- PGlite builds it too. ILIKE lowers text with lower() in the database's collation, and so does this
-- function, on both sides (db/queries/reviews/rules.ts); the ILIKE stays as the exact recheck.
CREATE OR REPLACE FUNCTION partner_grams(content text, menus text[]) RETURNS text[]
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$
    SELECT coalesce(array_agg(DISTINCT substr(part, i, n)), '{}')
    FROM unnest(array_prepend(content, menus)) AS parts(raw)
    CROSS JOIN LATERAL (SELECT lower(raw) AS part) AS lowered
    CROSS JOIN LATERAL generate_series(1, char_length(part)) AS i
    CROSS JOIN (VALUES (1), (2)) AS lengths(n)
    WHERE i + n - 1 <= char_length(part)
  $$;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS reviews_grams_idx ON reviews USING gin (partner_grams(content, menus));
--> statement-breakpoint
-- The planner estimates `partner_grams(…) @> …` from the statistics of this index's expression.
ANALYZE reviews;
