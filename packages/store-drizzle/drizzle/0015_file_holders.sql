CREATE TABLE "file_holders" (
	"principal" text NOT NULL,
	"file_id" text NOT NULL,
	"session_id" text NOT NULL,
	CONSTRAINT "file_holders_pkey" PRIMARY KEY("principal","file_id","session_id")
);
--> statement-breakpoint
CREATE INDEX "file_holders_session_idx" ON "file_holders" USING btree ("principal","session_id");