CREATE TYPE "public"."account_status" AS ENUM('ACTIVE', 'INACTIVE', 'ERROR', 'LINKING');--> statement-breakpoint
CREATE TYPE "public"."manager_role" AS ENUM('OWNER', 'MANAGER', 'SUPERVISOR');--> statement-breakpoint
CREATE TYPE "public"."platform" AS ENUM('BAEMIN', 'CPEATS', 'YOGIYO', 'DDANGYO', 'NAVER', 'MUKKEBI');--> statement-breakpoint
CREATE TYPE "public"."reply_state" AS ENUM('NONE', 'POSTED', 'OWNER_DIRECT', 'SCHEDULED', 'FAILED');--> statement-breakpoint
CREATE TYPE "public"."shop_status" AS ENUM('ACTIVE', 'INACTIVE', 'FAILED');--> statement-breakpoint
CREATE TABLE "aggregate_runs" (
	"id" serial PRIMARY KEY NOT NULL,
	"through_day" date NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "review_stats_daily" (
	"shop_id" integer NOT NULL,
	"day" date NOT NULL,
	"brand_id" integer NOT NULL,
	"review_count" integer NOT NULL,
	"reply_count" integer NOT NULL,
	"rating_one" integer NOT NULL,
	"rating_two" integer NOT NULL,
	"rating_three" integer NOT NULL,
	"rating_four" integer NOT NULL,
	"rating_five" integer NOT NULL,
	CONSTRAINT "review_stats_daily_shop_id_day_pk" PRIMARY KEY("shop_id","day")
);
--> statement-breakpoint
CREATE TABLE "sales_daily" (
	"shop_id" integer NOT NULL,
	"day" date NOT NULL,
	"brand_id" integer NOT NULL,
	"sales_amount" bigint NOT NULL,
	CONSTRAINT "sales_daily_shop_id_day_pk" PRIMARY KEY("shop_id","day")
);
--> statement-breakpoint
CREATE TABLE "alert_numbers" (
	"id" serial PRIMARY KEY NOT NULL,
	"brand_id" integer NOT NULL,
	"phone_number" text NOT NULL,
	"manager_id" integer,
	"verified_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "alert_numbers_brand_phone_uq" UNIQUE("brand_id","phone_number")
);
--> statement-breakpoint
CREATE TABLE "shop_alert_numbers" (
	"shop_id" integer NOT NULL,
	"alert_number_id" integer NOT NULL,
	"slot" smallint NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "shop_alert_numbers_shop_id_alert_number_id_pk" PRIMARY KEY("shop_id","alert_number_id"),
	CONSTRAINT "shop_alert_numbers_slot_uq" UNIQUE("shop_id","slot"),
	CONSTRAINT "shop_alert_numbers_slot_range" CHECK ("shop_alert_numbers"."slot" BETWEEN 1 AND 3)
);
--> statement-breakpoint
CREATE TABLE "brands" (
	"id" serial PRIMARY KEY NOT NULL,
	"partner_id" integer NOT NULL,
	"brand_code" text NOT NULL,
	"display_name" text NOT NULL,
	"critical_star_min" smallint DEFAULT 1 NOT NULL,
	"critical_star_max" smallint DEFAULT 2 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "brands_brand_code_unique" UNIQUE("brand_code"),
	CONSTRAINT "brands_code_format" CHECK ("brands"."brand_code" ~ '^[A-Za-z0-9_-]{1,64}$'),
	CONSTRAINT "brands_critical_range" CHECK ("brands"."critical_star_min" BETWEEN 1 AND 5 AND "brands"."critical_star_max" BETWEEN 1 AND 5 AND "brands"."critical_star_min" <= "brands"."critical_star_max")
);
--> statement-breakpoint
CREATE TABLE "managers" (
	"id" serial PRIMARY KEY NOT NULL,
	"brand_id" integer NOT NULL,
	"display_name" text NOT NULL,
	"role" "manager_role",
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "shop_managers" (
	"shop_id" integer NOT NULL,
	"manager_id" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "shop_managers_shop_id_manager_id_pk" PRIMARY KEY("shop_id","manager_id")
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" serial PRIMARY KEY NOT NULL,
	"partner_id" integer NOT NULL,
	"key_hash" char(64) NOT NULL,
	"display_prefix" text NOT NULL,
	"label" text,
	"revoked_at" timestamp with time zone,
	"expires_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "api_keys_key_hash_unique" UNIQUE("key_hash"),
	CONSTRAINT "api_keys_hash_hex" CHECK ("api_keys"."key_hash" ~ '^[0-9a-f]{64}$')
);
--> statement-breakpoint
CREATE TABLE "partners" (
	"id" serial PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"is_active" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "partners_name_unique" UNIQUE("name")
);
--> statement-breakpoint
CREATE TABLE "reviews" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"review_code" text NOT NULL,
	"brand_id" integer NOT NULL,
	"shop_id" integer NOT NULL,
	"written_at" timestamp with time zone NOT NULL,
	"content" text DEFAULT '' NOT NULL,
	"rating" double precision,
	"menus" text[],
	"ai_negative" boolean DEFAULT false NOT NULL,
	"reply_state" "reply_state" DEFAULT 'NONE' NOT NULL,
	"reply_content" text,
	"reply_at" timestamp with time zone,
	"alert_sent_at" timestamp with time zone,
	"star_bucket" smallint GENERATED ALWAYS AS (CASE WHEN rating IS NULL THEN 0 WHEN rating < 1 THEN 1 ELSE floor(rating)::smallint END) STORED NOT NULL,
	"is_replied" boolean GENERATED ALWAYS AS (reply_state IN ('POSTED', 'OWNER_DIRECT')) STORED NOT NULL,
	"is_handled" boolean GENERATED ALWAYS AS (reply_state IN ('POSTED', 'OWNER_DIRECT') OR alert_sent_at IS NOT NULL) STORED NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "reviews_code_uq" UNIQUE("review_code"),
	CONSTRAINT "reviews_rating_steps" CHECK ("reviews"."rating" IS NULL OR ("reviews"."rating" BETWEEN 0.5 AND 5 AND "reviews"."rating" * 2 = floor("reviews"."rating" * 2))),
	CONSTRAINT "reviews_menus_not_empty" CHECK ("reviews"."menus" IS NULL OR cardinality("reviews"."menus") > 0),
	CONSTRAINT "reviews_code_format" CHECK ("reviews"."review_code" ~ '^[A-Za-z0-9_-]{1,64}$')
);
--> statement-breakpoint
CREATE TABLE "sales_snapshots" (
	"shop_id" integer NOT NULL,
	"day" date NOT NULL,
	"amount" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sales_snapshots_shop_id_day_pk" PRIMARY KEY("shop_id","day"),
	CONSTRAINT "sales_snapshots_amount" CHECK ("sales_snapshots"."amount" >= 0)
);
--> statement-breakpoint
CREATE TABLE "shops" (
	"id" serial PRIMARY KEY NOT NULL,
	"brand_id" integer NOT NULL,
	"user_id" integer,
	"platform" "platform" NOT NULL,
	"platform_shop_id" text NOT NULL,
	"name" text NOT NULL,
	"category_name" text NOT NULL,
	"status" "shop_status" NOT NULL,
	"linked_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "shops_platform_shop_uq" UNIQUE("brand_id","platform","platform_shop_id")
);
--> statement-breakpoint
CREATE TABLE "brand_users" (
	"id" serial PRIMARY KEY NOT NULL,
	"brand_id" integer NOT NULL,
	"user_code" text NOT NULL,
	"display_name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "brand_users_code_uq" UNIQUE("brand_id","user_code"),
	CONSTRAINT "brand_users_code_format" CHECK ("brand_users"."user_code" ~ '^[A-Za-z0-9_-]{1,64}$')
);
--> statement-breakpoint
CREATE TABLE "platform_accounts" (
	"user_id" integer NOT NULL,
	"platform" "platform" NOT NULL,
	"status" "account_status" NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "platform_accounts_user_id_platform_pk" PRIMARY KEY("user_id","platform")
);
--> statement-breakpoint
ALTER TABLE "review_stats_daily" ADD CONSTRAINT "review_stats_daily_shop_id_shops_id_fk" FOREIGN KEY ("shop_id") REFERENCES "public"."shops"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "review_stats_daily" ADD CONSTRAINT "review_stats_daily_brand_id_brands_id_fk" FOREIGN KEY ("brand_id") REFERENCES "public"."brands"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sales_daily" ADD CONSTRAINT "sales_daily_shop_id_shops_id_fk" FOREIGN KEY ("shop_id") REFERENCES "public"."shops"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sales_daily" ADD CONSTRAINT "sales_daily_brand_id_brands_id_fk" FOREIGN KEY ("brand_id") REFERENCES "public"."brands"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_numbers" ADD CONSTRAINT "alert_numbers_brand_id_brands_id_fk" FOREIGN KEY ("brand_id") REFERENCES "public"."brands"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_numbers" ADD CONSTRAINT "alert_numbers_manager_id_managers_id_fk" FOREIGN KEY ("manager_id") REFERENCES "public"."managers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "shop_alert_numbers" ADD CONSTRAINT "shop_alert_numbers_shop_id_shops_id_fk" FOREIGN KEY ("shop_id") REFERENCES "public"."shops"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "shop_alert_numbers" ADD CONSTRAINT "shop_alert_numbers_alert_number_id_alert_numbers_id_fk" FOREIGN KEY ("alert_number_id") REFERENCES "public"."alert_numbers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "brands" ADD CONSTRAINT "brands_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "managers" ADD CONSTRAINT "managers_brand_id_brands_id_fk" FOREIGN KEY ("brand_id") REFERENCES "public"."brands"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "shop_managers" ADD CONSTRAINT "shop_managers_shop_id_shops_id_fk" FOREIGN KEY ("shop_id") REFERENCES "public"."shops"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "shop_managers" ADD CONSTRAINT "shop_managers_manager_id_managers_id_fk" FOREIGN KEY ("manager_id") REFERENCES "public"."managers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reviews" ADD CONSTRAINT "reviews_brand_id_brands_id_fk" FOREIGN KEY ("brand_id") REFERENCES "public"."brands"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reviews" ADD CONSTRAINT "reviews_shop_id_shops_id_fk" FOREIGN KEY ("shop_id") REFERENCES "public"."shops"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sales_snapshots" ADD CONSTRAINT "sales_snapshots_shop_id_shops_id_fk" FOREIGN KEY ("shop_id") REFERENCES "public"."shops"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "shops" ADD CONSTRAINT "shops_brand_id_brands_id_fk" FOREIGN KEY ("brand_id") REFERENCES "public"."brands"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "shops" ADD CONSTRAINT "shops_user_id_brand_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."brand_users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "brand_users" ADD CONSTRAINT "brand_users_brand_id_brands_id_fk" FOREIGN KEY ("brand_id") REFERENCES "public"."brands"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "platform_accounts" ADD CONSTRAINT "platform_accounts_user_id_brand_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."brand_users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "review_stats_daily_brand_day_idx" ON "review_stats_daily" USING btree ("brand_id","day");--> statement-breakpoint
CREATE INDEX "sales_daily_brand_day_idx" ON "sales_daily" USING btree ("brand_id","day");--> statement-breakpoint
CREATE INDEX "shop_alert_numbers_number_idx" ON "shop_alert_numbers" USING btree ("alert_number_id");--> statement-breakpoint
CREATE INDEX "brands_partner_idx" ON "brands" USING btree ("partner_id","created_at","brand_code");--> statement-breakpoint
CREATE INDEX "managers_brand_idx" ON "managers" USING btree ("brand_id");--> statement-breakpoint
CREATE INDEX "shop_managers_manager_idx" ON "shop_managers" USING btree ("manager_id");--> statement-breakpoint
CREATE INDEX "api_keys_partner_idx" ON "api_keys" USING btree ("partner_id");--> statement-breakpoint
CREATE INDEX "reviews_brand_written_idx" ON "reviews" USING btree ("brand_id","written_at","review_code");--> statement-breakpoint
CREATE INDEX "reviews_shop_written_idx" ON "reviews" USING btree ("shop_id","written_at","review_code");--> statement-breakpoint
CREATE INDEX "shops_order_idx" ON "shops" USING btree ("brand_id","name","platform","platform_shop_id");--> statement-breakpoint
CREATE INDEX "shops_user_idx" ON "shops" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "brand_users_order_idx" ON "brand_users" USING btree ("brand_id","created_at","user_code");