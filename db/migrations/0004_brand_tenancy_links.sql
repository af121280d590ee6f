-- Tenancy in the keys of the two remaining link tables (issue 7 finding 8): shop_managers and
-- shop_alert_numbers carry the brand, and composite keys make the shop, the manager and the alert number
-- agree on it, as reviews and the aggregates already do. Existing rows take their shop's brand; a row that
-- links another brand's manager or number then fails its foreign key and stops the migration, on purpose:
-- such a row already shows one partner's administrator to another and must be removed by hand.
ALTER TABLE "alert_numbers" ADD CONSTRAINT "alert_numbers_brand_id_uq" UNIQUE("brand_id","id");--> statement-breakpoint
ALTER TABLE "shop_managers" ADD COLUMN "brand_id" integer;--> statement-breakpoint
UPDATE "shop_managers" SET "brand_id" = "shops"."brand_id" FROM "shops" WHERE "shops"."id" = "shop_managers"."shop_id";--> statement-breakpoint
ALTER TABLE "shop_managers" ALTER COLUMN "brand_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "shop_alert_numbers" ADD COLUMN "brand_id" integer;--> statement-breakpoint
UPDATE "shop_alert_numbers" SET "brand_id" = "shops"."brand_id" FROM "shops" WHERE "shops"."id" = "shop_alert_numbers"."shop_id";--> statement-breakpoint
ALTER TABLE "shop_alert_numbers" ALTER COLUMN "brand_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "shop_alert_numbers" ADD CONSTRAINT "shop_alert_numbers_brand_id_brands_id_fk" FOREIGN KEY ("brand_id") REFERENCES "public"."brands"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "shop_alert_numbers" ADD CONSTRAINT "shop_alert_numbers_brand_shop_fk" FOREIGN KEY ("brand_id","shop_id") REFERENCES "public"."shops"("brand_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "shop_alert_numbers" ADD CONSTRAINT "shop_alert_numbers_brand_number_fk" FOREIGN KEY ("brand_id","alert_number_id") REFERENCES "public"."alert_numbers"("brand_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "shop_managers" ADD CONSTRAINT "shop_managers_brand_id_brands_id_fk" FOREIGN KEY ("brand_id") REFERENCES "public"."brands"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "shop_managers" ADD CONSTRAINT "shop_managers_brand_shop_fk" FOREIGN KEY ("brand_id","shop_id") REFERENCES "public"."shops"("brand_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "shop_managers" ADD CONSTRAINT "shop_managers_brand_manager_fk" FOREIGN KEY ("brand_id","manager_id") REFERENCES "public"."managers"("brand_id","id") ON DELETE no action ON UPDATE no action;
