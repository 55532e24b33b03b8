CREATE TABLE "files" (
	"principal" text NOT NULL,
	"file_id" text NOT NULL,
	"name" text NOT NULL,
	"mime_type" text NOT NULL,
	"size_bytes" bigint NOT NULL,
	"content_hash" text NOT NULL,
	"content" "bytea" NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone,
	CONSTRAINT "files_pkey" PRIMARY KEY("principal","file_id")
);
--> statement-breakpoint
CREATE TABLE "llm_calls" (
	"principal" text NOT NULL,
	"session_id" text NOT NULL,
	"turn_id" text NOT NULL,
	"call_index" integer NOT NULL,
	"request" jsonb NOT NULL,
	"response" jsonb,
	"provider_request" jsonb,
	"provider_response" jsonb,
	"error" jsonb,
	"started_at" timestamp with time zone NOT NULL,
	"duration_ms" double precision NOT NULL,
	CONSTRAINT "llm_calls_pkey" PRIMARY KEY("principal","session_id","turn_id","call_index")
);
--> statement-breakpoint
CREATE TABLE "mode_history" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"principal" text NOT NULL,
	"session_id" text NOT NULL,
	"turn_id" text NOT NULL,
	"previous_mode" text NOT NULL,
	"new_mode" text NOT NULL,
	"reason" text NOT NULL,
	"changed_by" text NOT NULL,
	"changed_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"principal" text NOT NULL,
	"session_id" text NOT NULL,
	"conversation_context_id" text NOT NULL,
	"agent_context_id" text,
	"mode" text NOT NULL,
	"solution_context_text" text,
	"cursor" jsonb NOT NULL,
	"open_turn_id" text,
	"turn_count" integer DEFAULT 0 NOT NULL,
	"lease_owner" text,
	"lease_expires_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "sessions_pkey" PRIMARY KEY("principal","session_id")
);
--> statement-breakpoint
CREATE TABLE "transcript_items" (
	"principal" text NOT NULL,
	"session_id" text NOT NULL,
	"position" integer NOT NULL,
	"item" jsonb NOT NULL,
	CONSTRAINT "transcript_items_pkey" PRIMARY KEY("principal","session_id","position")
);
--> statement-breakpoint
CREATE TABLE "turns" (
	"principal" text NOT NULL,
	"session_id" text NOT NULL,
	"turn_id" text NOT NULL,
	"sequence" integer NOT NULL,
	"status" text NOT NULL,
	"mode" text NOT NULL,
	"stream" boolean NOT NULL,
	"rounds" jsonb NOT NULL,
	"pending" jsonb,
	"start_cursor" jsonb NOT NULL,
	"tool_executions" jsonb NOT NULL,
	"files" jsonb NOT NULL,
	"usage" jsonb NOT NULL,
	"llm_call_count" integer NOT NULL,
	"error" jsonb,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	"completed_at" timestamp with time zone,
	CONSTRAINT "turns_pkey" PRIMARY KEY("principal","session_id","turn_id")
);
--> statement-breakpoint
CREATE INDEX "mode_history_session_idx" ON "mode_history" USING btree ("principal","session_id","id");--> statement-breakpoint
CREATE INDEX "sessions_open_lease_expiry_idx" ON "sessions" USING btree ("lease_expires_at") WHERE "sessions"."open_turn_id" is not null;--> statement-breakpoint
CREATE INDEX "turns_sequence_idx" ON "turns" USING btree ("principal","session_id","sequence");