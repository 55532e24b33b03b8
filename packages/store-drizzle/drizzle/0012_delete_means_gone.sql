-- Delete means gone: files know the turn that produced them (deleted with its session, swept when it failed),
-- and a deleted session's responses stored at a provider wait here until the provider has deleted them.
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
CREATE INDEX "response_deletions_due_idx" ON "response_deletions" USING btree ("next_attempt_at");--> statement-breakpoint
CREATE INDEX "files_turn_idx" ON "files" USING btree ("principal","session_id","turn_id") WHERE "files"."session_id" is not null;