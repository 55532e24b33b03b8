CREATE TABLE "turn_events" (
	"principal" text NOT NULL,
	"session_id" text NOT NULL,
	"turn_id" text NOT NULL,
	"round" integer NOT NULL,
	"seq" integer NOT NULL,
	"delta" text NOT NULL,
	CONSTRAINT "turn_events_pkey" PRIMARY KEY("principal","session_id","turn_id","round","seq")
);
