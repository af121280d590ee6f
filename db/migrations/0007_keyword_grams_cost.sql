-- partner_grams (migration 0005) recomputes every character and pair of a review when it is evaluated on
-- a row, about 0.1-0.2 ms, so it costs far more than the default 100 × cpu_operator_cost the planner
-- assumes. Priced as it is, the planner puts it after the ILIKE in a row filter, where a common short
-- keyword (`맛`) is checked on the newest rows in order: 7.6 -> 3.7 ms at 1M reviews (issue 8), and weighs
-- the ordered scan against the grams index with its real cost. Rare and absent keywords keep the index.
ALTER FUNCTION partner_grams(text, text[]) COST 1000;
