-- The session list reads no turn: the first instruction and the latest workspace are kept on the session row
-- (written as turns start), and a principal's sessions are read newest first through an index.
ALTER TABLE "sessions" ADD COLUMN "first_instruction" text;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "workspace_id" text;--> statement-breakpoint
UPDATE "sessions" SET
  "first_instruction" = left((SELECT "rounds" -> 0 -> 'request' ->> 'instruction' FROM "turns" t
    WHERE t."principal" = "sessions"."principal" AND t."session_id" = "sessions"."session_id"
      AND t."rounds" -> 0 -> 'request' ->> 'instruction' IS NOT NULL ORDER BY t."sequence" LIMIT 1), 256),
  "workspace_id" = (SELECT "rounds" -> 0 -> 'request' ->> 'workspaceId' FROM "turns" t
    WHERE t."principal" = "sessions"."principal" AND t."session_id" = "sessions"."session_id"
      AND t."rounds" -> 0 -> 'request' ->> 'workspaceId' IS NOT NULL ORDER BY t."sequence" DESC LIMIT 1);--> statement-breakpoint
CREATE INDEX "sessions_principal_updated_idx" ON "sessions" USING btree ("principal","updated_at","session_id" collate "C");--> statement-breakpoint
CREATE INDEX "turns_session_sequence_idx" ON "turns" USING btree ("principal","session_id","sequence");
