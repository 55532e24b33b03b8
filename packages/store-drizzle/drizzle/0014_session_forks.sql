ALTER TABLE "sessions" ADD COLUMN "forked_from_session_id" text;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "forked_from_turn_id" text;