-- A webhook event's row is updated twice: claimed (its lease), then recorded (D-28). The room fillfactor
-- leaves on each page lets the claim's new row version stay on its page (HOT): the lease columns are in no
-- index, so the claim adds no index entries and leaves none dead for the next claim's scan to step over.
ALTER TABLE "webhook_deliveries" SET (fillfactor = 50);
