-- Stable ordering (D-9) must not depend on the database's default collation: byte order ("C") for every
-- text column a list is ordered by, so PGlite and any PostgreSQL page identically. The btree indexes on
-- these columns are rebuilt with the new collation, so ORDER BY still uses them.
ALTER TABLE brands ALTER COLUMN brand_code TYPE text COLLATE "C";
--> statement-breakpoint
ALTER TABLE brand_users ALTER COLUMN user_code TYPE text COLLATE "C";
--> statement-breakpoint
ALTER TABLE shops ALTER COLUMN name TYPE text COLLATE "C";
--> statement-breakpoint
ALTER TABLE shops ALTER COLUMN platform_shop_id TYPE text COLLATE "C";
--> statement-breakpoint
ALTER TABLE managers ALTER COLUMN display_name TYPE text COLLATE "C";
--> statement-breakpoint
ALTER TABLE reviews ALTER COLUMN review_code TYPE text COLLATE "C";
