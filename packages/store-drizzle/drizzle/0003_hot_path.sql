DROP INDEX "sessions_open_lease_expiry_idx";--> statement-breakpoint
DROP INDEX "turns_sequence_idx";--> statement-breakpoint
CREATE INDEX "turns_running_idx" ON "turns" USING btree ("created_at") WHERE "turns"."status" = 'running';--> statement-breakpoint
-- Room on every page for the next versions of a session row, so its frequent updates (none of an indexed
-- column) stay HOT: written beside the old version, with no index entry to add.
ALTER TABLE "sessions" SET (fillfactor = 50);--> statement-breakpoint
-- Followers on every instance hear of a streamed turn's new deltas and round results (TurnEventLog.listen):
-- NOTIFY is sent at commit, so a follower woken by it reads what was committed.
CREATE FUNCTION "aptix_turn_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('aptix_turn_changed', json_build_array(TG_TABLE_SCHEMA, NEW."principal", NEW."session_id", NEW."turn_id")::text);
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "turns_rounds_changed" AFTER UPDATE OF "rounds" ON "turns"
  FOR EACH ROW WHEN (NEW."stream") EXECUTE FUNCTION "aptix_turn_changed"();--> statement-breakpoint
CREATE TRIGGER "turn_events_appended" AFTER INSERT ON "turn_events"
  FOR EACH ROW EXECUTE FUNCTION "aptix_turn_changed"();
