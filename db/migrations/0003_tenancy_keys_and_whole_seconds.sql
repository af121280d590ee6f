-- Tenancy in the keys: rows that denormalise brand_id must agree with the shop (user, manager) they
-- refer to, through (brand_id, id) keys; the unique keys come first for the foreign keys to refer to.
-- written_at keeps whole seconds, as the API shows it (D-9).
ALTER TABLE "managers" ADD CONSTRAINT "managers_brand_id_uq" UNIQUE("brand_id","id");
--> statement-breakpoint
ALTER TABLE "shops" ADD CONSTRAINT "shops_brand_id_uq" UNIQUE("brand_id","id");
--> statement-breakpoint
ALTER TABLE "brand_users" ADD CONSTRAINT "brand_users_brand_id_uq" UNIQUE("brand_id","id");
--> statement-breakpoint
ALTER TABLE "reviews" ALTER COLUMN "written_at" SET DATA TYPE timestamp (0) with time zone;
--> statement-breakpoint
ALTER TABLE "review_stats_daily" ADD CONSTRAINT "review_stats_daily_brand_shop_fk" FOREIGN KEY ("brand_id","shop_id") REFERENCES "public"."shops"("brand_id","id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "sales_daily" ADD CONSTRAINT "sales_daily_brand_shop_fk" FOREIGN KEY ("brand_id","shop_id") REFERENCES "public"."shops"("brand_id","id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "alert_numbers" ADD CONSTRAINT "alert_numbers_brand_manager_fk" FOREIGN KEY ("brand_id","manager_id") REFERENCES "public"."managers"("brand_id","id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "reviews" ADD CONSTRAINT "reviews_brand_shop_fk" FOREIGN KEY ("brand_id","shop_id") REFERENCES "public"."shops"("brand_id","id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "shops" ADD CONSTRAINT "shops_brand_user_fk" FOREIGN KEY ("brand_id","user_id") REFERENCES "public"."brand_users"("brand_id","id") ON DELETE no action ON UPDATE no action;
