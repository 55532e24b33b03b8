-- Bounded reads: the session list reads no turn (the first instruction and the latest workspace are kept on the
-- session row as turns start) and pages through indexes. Delete means gone: files know the turn that produced them,
-- and a deleted session's responses stored at a provider wait in response_deletions until deleted there. Long
-- sessions: a session's compactions, and a stream's context.compacted events beside its deltas.
CREATE TABLE "compactions" (
	"principal" text NOT NULL,
	"session_id" text NOT NULL,
	"from_position" integer NOT NULL,
	"turn_id" text NOT NULL,
	"reason" text NOT NULL,
	"summary" text NOT NULL,
	"tokens_before" integer NOT NULL,
	"tokens_after" integer NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "compactions_pkey" PRIMARY KEY("principal","session_id","from_position")
);
--> statement-breakpoint
CREATE TABLE "response_deletions" (
	"provider" text NOT NULL,
	"response_id" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone NOT NULL,
	CONSTRAINT "response_deletions_pkey" PRIMARY KEY("provider","response_id")
);
--> statement-breakpoint
ALTER TABLE "files" ADD COLUMN "session_id" text;--> statement-breakpoint
ALTER TABLE "files" ADD COLUMN "turn_id" text;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "first_instruction" text;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "workspace_id" text;--> statement-breakpoint
ALTER TABLE "turn_events" ADD COLUMN "event" text;--> statement-breakpoint
UPDATE "sessions" SET
  "first_instruction" = left((SELECT "rounds" -> 0 -> 'request' ->> 'instruction' FROM "turns" t
    WHERE t."principal" = "sessions"."principal" AND t."session_id" = "sessions"."session_id"
      AND t."rounds" -> 0 -> 'request' ->> 'instruction' IS NOT NULL ORDER BY t."sequence" LIMIT 1), 256),
  "workspace_id" = (SELECT "rounds" -> 0 -> 'request' ->> 'workspaceId' FROM "turns" t
    WHERE t."principal" = "sessions"."principal" AND t."session_id" = "sessions"."session_id"
      AND t."rounds" -> 0 -> 'request' ->> 'workspaceId' IS NOT NULL ORDER BY t."sequence" DESC LIMIT 1);--> statement-breakpoint
CREATE INDEX "response_deletions_due_idx" ON "response_deletions" USING btree ("next_attempt_at");--> statement-breakpoint
CREATE INDEX "files_turn_idx" ON "files" USING btree ("principal","session_id","turn_id") WHERE "files"."session_id" is not null;--> statement-breakpoint
CREATE INDEX "sessions_principal_updated_idx" ON "sessions" USING btree (("principal" || ''),"updated_at","session_id" collate "C");--> statement-breakpoint
CREATE INDEX "turns_session_sequence_idx" ON "turns" USING btree (("principal" || ''),("session_id" || ''),"sequence");