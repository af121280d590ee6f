-- Webhook delivery (D-28) wakes on a change instead of polling for it: every statement that adds to the
-- review change record, writes webhook endpoints or events (the operator's enable, replay and test), or
-- writes partners or brands (a partner activated, a brand added) notifies the channel webhook_wake at its
-- commit, naming its transaction: the feed reads a change only once every older transaction ended, and the
-- worker reads again until it has. Statement triggers without transition tables: PostgreSQL folds a
-- transaction's identical notices into one, so a bulk write wakes the worker once.
CREATE FUNCTION webhook_wake() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('webhook_wake', pg_current_xact_id()::text);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER webhook_wake_insert AFTER INSERT ON review_changes
  FOR EACH STATEMENT EXECUTE FUNCTION webhook_wake();
--> statement-breakpoint
CREATE TRIGGER webhook_wake_truncate AFTER TRUNCATE ON review_changes
  FOR EACH STATEMENT EXECUTE FUNCTION webhook_wake();
--> statement-breakpoint
CREATE TRIGGER webhook_wake_write AFTER INSERT OR UPDATE OR DELETE ON webhook_endpoints
  FOR EACH STATEMENT EXECUTE FUNCTION webhook_wake();
--> statement-breakpoint
CREATE TRIGGER webhook_wake_insert AFTER INSERT ON webhook_deliveries
  FOR EACH STATEMENT EXECUTE FUNCTION webhook_wake();
--> statement-breakpoint
CREATE TRIGGER webhook_wake_update AFTER UPDATE ON partners
  FOR EACH STATEMENT EXECUTE FUNCTION webhook_wake();
--> statement-breakpoint
CREATE TRIGGER webhook_wake_write AFTER INSERT OR UPDATE ON brands
  FOR EACH STATEMENT EXECUTE FUNCTION webhook_wake();
