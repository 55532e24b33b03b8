CREATE TABLE "webhook_deliveries" (
	"delivery_id" text PRIMARY KEY NOT NULL,
	"target" text NOT NULL,
	"body" text NOT NULL,
	"attempts" integer NOT NULL,
	"due_at" timestamp with time zone NOT NULL,
	"claimant" text,
	"claimed_until" timestamp with time zone
);
--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" USING btree ("due_at");