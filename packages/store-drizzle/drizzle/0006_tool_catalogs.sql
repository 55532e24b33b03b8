CREATE TABLE "tool_catalogs" (
	"digest" text PRIMARY KEY NOT NULL,
	"tools" jsonb NOT NULL
);
--> statement-breakpoint
ALTER TABLE "llm_calls" ADD COLUMN "request_tools" text;--> statement-breakpoint
ALTER TABLE "llm_calls" ADD COLUMN "provider_request_tools" text;