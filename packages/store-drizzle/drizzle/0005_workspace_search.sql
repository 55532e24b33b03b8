CREATE TABLE "workspace_terms" (
	"workspace" bigint NOT NULL,
	"term" text NOT NULL,
	"chunks" integer NOT NULL,
	CONSTRAINT "workspace_terms_pkey" PRIMARY KEY("workspace","term")
);
--> statement-breakpoint
DROP INDEX "workspace_chunks_workspace_idx";--> statement-breakpoint
ALTER TABLE "workspace_chunks" ADD COLUMN "term_count" integer NOT NULL;--> statement-breakpoint
ALTER TABLE "workspaces" ADD COLUMN "chunk_count" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "workspaces" ADD COLUMN "term_total" bigint DEFAULT 0 NOT NULL;