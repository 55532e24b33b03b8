-- Usage, cost and budgets: each successful LLM call's usage, kept apart from its trace so that deleting a session
-- does not give back what it spent, indexed for a principal's usage over a time range; and the provider of a call.
CREATE TABLE "llm_usage" (
	"principal" text NOT NULL,
	"session_id" text NOT NULL,
	"turn_id" text NOT NULL,
	"call_index" integer NOT NULL,
	"provider" text NOT NULL,
	"model" text NOT NULL,
	"input_tokens" integer NOT NULL,
	"cached_input_tokens" integer NOT NULL,
	"output_tokens" integer NOT NULL,
	"reasoning_tokens" integer NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	CONSTRAINT "llm_usage_pkey" PRIMARY KEY("principal","session_id","turn_id","call_index")
);
--> statement-breakpoint
ALTER TABLE "llm_calls" ADD COLUMN "provider" text;--> statement-breakpoint
CREATE INDEX "llm_usage_principal_started_idx" ON "llm_usage" USING btree ("principal","started_at");