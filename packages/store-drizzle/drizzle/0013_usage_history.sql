-- Usage is history: each call's usage row is keyed by the call's own id, inserted once and never replaced, so a
-- session deleted and made again under the same ids adds to what was spent; calls outside a session (embeddings
-- of pushed documents) have no session. Usage reads are bounded: daily roll-ups by principal, day, provider and
-- model (and by session too), kept by a trigger in the statement that inserts the calls. Secrets made once per
-- database, shared by every instance (the prompt-cache key's).
CREATE TABLE "deployment_secrets" (
	"name" text PRIMARY KEY NOT NULL,
	"secret" "bytea" NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "usage_days" (
	"principal" text NOT NULL,
	"day" date NOT NULL,
	"provider" text NOT NULL,
	"model" text NOT NULL,
	"input_tokens" bigint NOT NULL,
	"cached_input_tokens" bigint NOT NULL,
	"output_tokens" bigint NOT NULL,
	"reasoning_tokens" bigint NOT NULL,
	"llm_calls" bigint NOT NULL,
	CONSTRAINT "usage_days_pkey" PRIMARY KEY("principal","day","provider","model")
);
--> statement-breakpoint
CREATE TABLE "usage_session_days" (
	"principal" text NOT NULL,
	"session_id" text NOT NULL,
	"day" date NOT NULL,
	"provider" text NOT NULL,
	"model" text NOT NULL,
	"input_tokens" bigint NOT NULL,
	"cached_input_tokens" bigint NOT NULL,
	"output_tokens" bigint NOT NULL,
	"reasoning_tokens" bigint NOT NULL,
	"llm_calls" bigint NOT NULL,
	CONSTRAINT "usage_session_days_pkey" PRIMARY KEY("principal","session_id","day","provider","model")
);
--> statement-breakpoint
DROP INDEX "llm_usage_principal_started_idx";--> statement-breakpoint
ALTER TABLE "llm_usage" DROP CONSTRAINT "llm_usage_pkey";--> statement-breakpoint
ALTER TABLE "llm_usage" ALTER COLUMN "session_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "llm_usage" ALTER COLUMN "turn_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "llm_usage" ALTER COLUMN "call_index" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "llm_calls" ADD COLUMN "call_id" text;--> statement-breakpoint
ALTER TABLE "llm_usage" ADD COLUMN "call_id" text;--> statement-breakpoint
UPDATE "llm_usage" SET "call_id" = gen_random_uuid()::text;--> statement-breakpoint
ALTER TABLE "llm_usage" ALTER COLUMN "call_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "llm_usage" ADD CONSTRAINT "llm_usage_pkey" PRIMARY KEY("call_id");--> statement-breakpoint
CREATE INDEX "usage_session_days_page_idx" ON "usage_session_days" USING btree ("principal","session_id" collate "C","day");--> statement-breakpoint
CREATE INDEX "llm_usage_session_started_idx" ON "llm_usage" USING btree ("principal","session_id","started_at");--> statement-breakpoint
INSERT INTO "usage_days" SELECT "principal", ("started_at" AT TIME ZONE 'UTC')::date, "provider", "model",
    sum("input_tokens"), sum("cached_input_tokens"), sum("output_tokens"), sum("reasoning_tokens"), count(*)
  FROM "llm_usage" GROUP BY 1, 2, 3, 4;--> statement-breakpoint
INSERT INTO "usage_session_days" SELECT "principal", coalesce("session_id", ''), ("started_at" AT TIME ZONE 'UTC')::date,
    "provider", "model",
    sum("input_tokens"), sum("cached_input_tokens"), sum("output_tokens"), sum("reasoning_tokens"), count(*)
  FROM "llm_usage" GROUP BY 1, 2, 3, 4, 5;--> statement-breakpoint
-- The calls a statement inserted (a call kept again under its id is no insert), added to the roll-ups once per
-- statement, in key order so concurrent statements lock the rows they share in one order. The roll-ups are named
-- in the trigger's own schema, whatever the inserting connection's search_path.
CREATE FUNCTION "llm_usage_roll_up"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format($roll_up$
    INSERT INTO %I."usage_days" AS kept
      SELECT "principal", ("started_at" AT TIME ZONE 'UTC')::date, "provider", "model",
          sum("input_tokens"), sum("cached_input_tokens"), sum("output_tokens"), sum("reasoning_tokens"), count(*)
        FROM added GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
      ON CONFLICT ("principal", "day", "provider", "model") DO UPDATE SET
        "input_tokens" = kept."input_tokens" + excluded."input_tokens",
        "cached_input_tokens" = kept."cached_input_tokens" + excluded."cached_input_tokens",
        "output_tokens" = kept."output_tokens" + excluded."output_tokens",
        "reasoning_tokens" = kept."reasoning_tokens" + excluded."reasoning_tokens",
        "llm_calls" = kept."llm_calls" + excluded."llm_calls"
  $roll_up$, TG_TABLE_SCHEMA);
  EXECUTE format($roll_up$
    INSERT INTO %I."usage_session_days" AS kept
      SELECT "principal", coalesce("session_id", ''), ("started_at" AT TIME ZONE 'UTC')::date, "provider", "model",
          sum("input_tokens"), sum("cached_input_tokens"), sum("output_tokens"), sum("reasoning_tokens"), count(*)
        FROM added GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
      ON CONFLICT ("principal", "session_id", "day", "provider", "model") DO UPDATE SET
        "input_tokens" = kept."input_tokens" + excluded."input_tokens",
        "cached_input_tokens" = kept."cached_input_tokens" + excluded."cached_input_tokens",
        "output_tokens" = kept."output_tokens" + excluded."output_tokens",
        "reasoning_tokens" = kept."reasoning_tokens" + excluded."reasoning_tokens",
        "llm_calls" = kept."llm_calls" + excluded."llm_calls"
  $roll_up$, TG_TABLE_SCHEMA);
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "llm_usage_roll_up" AFTER INSERT ON "llm_usage" REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION "llm_usage_roll_up"();
