ALTER TABLE "workspace_documents" ADD COLUMN "size_bytes" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "turns_running_principal_idx" ON "turns" USING btree (("principal" || '')) WHERE "turns"."status" = 'running';--> statement-breakpoint
-- The claim's running-turn cap (APTIX_MAX_RUNNING_TURNS): whether principal `p` runs `cap` turns or more, each
-- a running turn whose session's lease is held and unexpired at `at`. Counts at most `cap`, through the
-- index above; seq scans are off so that a small table never has the principal's ended turns read either. A
-- null `cap` is no cap.
CREATE FUNCTION "aptix_at_running_cap"(p text, cap integer, at timestamptz) RETURNS boolean
  LANGUAGE plpgsql STABLE SET enable_seqscan = off AS $$
BEGIN
  RETURN cap IS NOT NULL AND (
    SELECT count(*) FROM (
      SELECT 1 FROM "turns" AS running JOIN "sessions" AS leased
        ON leased."principal" = running."principal" AND leased."session_id" = running."session_id"
          AND leased."open_turn_id" = running."turn_id"
      WHERE (running."principal" || '') = p AND running."status" = 'running'
        AND leased."lease_owner" IS NOT NULL AND leased."lease_expires_at" > at
      LIMIT cap
    ) AS counted
  ) >= cap;
END
$$;
