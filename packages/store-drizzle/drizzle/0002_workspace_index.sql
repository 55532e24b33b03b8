CREATE TABLE "workspace_chunks" (
	"chunk_id" text PRIMARY KEY NOT NULL,
	"document" bigint NOT NULL,
	"workspace" bigint NOT NULL,
	"start_line" integer NOT NULL,
	"end_line" integer NOT NULL,
	"text" text NOT NULL,
	"path_search_text" text NOT NULL,
	"search_text" text NOT NULL,
	"search_vector" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('simple'::regconfig, "workspace_chunks"."path_search_text"), 'A') || to_tsvector('simple'::regconfig, "workspace_chunks"."search_text")) STORED NOT NULL
);
--> statement-breakpoint
CREATE TABLE "workspace_documents" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"workspace" bigint NOT NULL,
	"path" text NOT NULL,
	"content_hash" text NOT NULL,
	"language" text NOT NULL,
	"repo" text,
	"tags" jsonb NOT NULL,
	"metadata" jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "workspace_embeddings" (
	"chunk_id" text NOT NULL,
	"model" text NOT NULL,
	"embedding" real[] NOT NULL,
	CONSTRAINT "workspace_embeddings_pkey" PRIMARY KEY("chunk_id","model")
);
--> statement-breakpoint
CREATE TABLE "workspaces" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"principal" text NOT NULL,
	"workspace_id" text NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "workspace_chunks_workspace_idx" ON "workspace_chunks" USING btree ("workspace");--> statement-breakpoint
CREATE INDEX "workspace_chunks_document_idx" ON "workspace_chunks" USING btree ("document");--> statement-breakpoint
CREATE INDEX "workspace_chunks_search_idx" ON "workspace_chunks" USING gin ("search_vector");--> statement-breakpoint
CREATE UNIQUE INDEX "workspace_documents_path_idx" ON "workspace_documents" USING btree ("workspace","path");--> statement-breakpoint
CREATE UNIQUE INDEX "workspaces_key_idx" ON "workspaces" USING btree ("principal","workspace_id");