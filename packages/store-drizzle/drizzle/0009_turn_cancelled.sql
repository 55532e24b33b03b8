-- A cancel reaches the instance running the turn (TurnEventLog.listenCancels): NOTIFY at the commit of the
-- write that makes a turn `cancelled`, streamed or not, on a channel of its own so that followers' wakeups
-- (aptix_turn_changed) cost the running instance nothing.
CREATE FUNCTION "aptix_turn_cancelled"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('aptix_turn_cancelled', json_build_array(TG_TABLE_SCHEMA, NEW."principal", NEW."session_id", NEW."turn_id")::text);
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "turns_cancelled" AFTER UPDATE OF "status" ON "turns"
  FOR EACH ROW WHEN (NEW."status" = 'cancelled' AND OLD."status" <> 'cancelled') EXECUTE FUNCTION "aptix_turn_cancelled"();
