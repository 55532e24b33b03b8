import type { LlmCallWrite, SessionKey, TranscriptItem } from "@aptix/core";
import type { llmCalls, sessions, turns } from "./schema.js";
import type { TableSql } from "./table-sql.js";

type SessionRow = typeof sessions.$inferSelect;
type TurnRow = typeof turns.$inferSelect;
type CallRow = typeof llmCalls.$inferSelect;

/** The tables a held write touches, as `TableSql`. */
export interface HeldWriteTables {
  sessions: TableSql<typeof sessions>;
  turns: TableSql<typeof turns>;
  llmCalls: TableSql<typeof llmCalls>;
  transcriptItems: { name: string };
  toolCatalogs: { name: string };
}

/**
 * One lease-guarded write of a turn's progress (`recordLlmCall`, `updateTurn`), as what it writes:
 * - `session`: columns to set on the session row (the lease owner's), the lease renewed or given up;
 * - `turn`: columns to set on one turn, when it exists (in status `expectStatus`, when given);
 * - `calls`: LLM call traces, and the transcript their progress leaves;
 * - `catalogs`: the tool catalogs those calls name that may not be stored yet (digest → JSON text).
 */
export interface HeldWrite {
  key: SessionKey;
  owner: string;
  session: {
    set: Partial<SessionRow>;
    renew?: { leaseClock: string | null; durationMs: number };
    release: boolean;
  };
  turn?: { turnId: string; set: Partial<TurnRow>; expectStatus?: string };
  calls: readonly { row: Partial<CallRow>; progress?: LlmCallWrite["progress"] }[];
  catalogs: ReadonlyMap<string, string>;
}

/** Every column of a call, in parameter order. */
const CALL_COLUMNS = [
  "principal",
  "sessionId",
  "turnId",
  "callIndex",
  "request",
  "response",
  "providerRequest",
  "providerResponse",
  "requestTools",
  "providerRequestTools",
  "error",
  "startedAt",
  "durationMs",
] as const satisfies readonly (keyof CallRow & string)[];

/**
 * A HeldWrite as one statement (data-modifying CTEs, so one commit and one round trip): nothing is written
 * unless the lease is held and, for a turn write, the turn is there in the expected status. It answers one row,
 * `held`: 1 when written, 0 when refused. Statement texts depend only on the write's shape (which columns,
 * how many calls, whether a transcript is written) and are built once per shape.
 */
export class HeldWriteStatements {
  readonly #tables: HeldWriteTables;
  readonly #texts = new Map<string, string>();

  constructor(tables: HeldWriteTables) {
    this.#tables = tables;
  }

  /** The statement text and its parameters. */
  statement(write: HeldWrite): { text: string; params: unknown[] } {
    const { sessions: s, turns: t, llmCalls: c } = this.#tables;
    const sessionColumns = Object.keys(write.session.set) as (keyof SessionRow & string)[];
    const turnColumns = Object.keys(write.turn?.set ?? {}) as (keyof TurnRow & string)[];
    const transcript = mergedTranscript(write.calls);
    const shape = [
      sessionColumns.join(),
      write.session.renew !== undefined,
      write.session.release,
      write.turn === undefined ? "-" : `${turnColumns.join()}:${write.turn.expectStatus !== undefined}`,
      write.calls.length,
      transcript !== undefined,
      write.catalogs.size > 0,
    ].join("|");
    const params: unknown[] = [write.key.principal, write.key.sessionId, write.owner];
    const param = (value: unknown): number => params.push(value);
    // Parameters in the text's order: the text is built from the same calls the first time a shape is seen.
    const parts: string[] = [];
    const turnId = write.turn === undefined ? 0 : param(write.turn.turnId);
    const turnValues = turnColumns.map((column) => param(t.encode(column, write.turn?.set[column])));
    const expected = write.turn?.expectStatus === undefined ? 0 : param(write.turn.expectStatus);
    const sessionValues = sessionColumns.map((column) => param(s.encode(column, write.session.set[column])));
    const renew = write.session.renew && [
      param(write.session.renew.leaseClock),
      param(write.session.renew.durationMs),
    ];
    const callValues = write.calls.map((call) =>
      CALL_COLUMNS.map((column) => param(c.encode(column, call.row[column]))),
    );
    const transcriptValues = transcript && [param(transcript.floor), param(JSON.stringify(transcript.items))];
    const catalogs = write.catalogs.size > 0 ? param(catalogsJson(write.catalogs)) : 0;
    let text = this.#texts.get(shape);
    if (text === undefined) {
      const held = "exists (select 1 from held)";
      const keyWhere = `"principal" = $1 and "session_id" = $2`;
      if (write.turn !== undefined) {
        const status = expected === 0 ? "" : ` and "status" = $${expected}`;
        parts.push(
          `turn_ok as (select 1 from ${t.name} where ${keyWhere} and "turn_id" = $${turnId}${status})`,
        );
      }
      const guard = write.turn === undefined ? "" : " and exists (select 1 from turn_ok)";
      const set = sessionColumns.map(
        (column, index) => `${s.column(column)} = ${s.param(column, sessionValues[index] ?? 0)}`,
      );
      if (renew) {
        set.push(
          `"lease_expires_at" = coalesce($${renew[0]}::timestamptz, now()) + $${renew[1]}::double precision * interval '1 millisecond'`,
        );
      }
      if (write.session.release) set.push(`"lease_owner" = null`, `"lease_expires_at" = null`);
      const leaseHeld = `${keyWhere} and "lease_owner" = $3${guard}`;
      parts.push(
        set.length > 0
          ? `held as (update ${s.name} set ${set.join(", ")} where ${leaseHeld} returning 1)`
          : `held as (select 1 from ${s.name} where ${leaseHeld} for no key update)`,
      );
      callValues.forEach((values, index) => {
        const columns = CALL_COLUMNS.map((column) => c.column(column)).join(", ");
        const selected = CALL_COLUMNS.map((column, i) => c.param(column, values[i] ?? 0)).join(", ");
        const replace = CALL_COLUMNS.slice(4)
          .map((column) => `${c.column(column)} = excluded.${c.column(column)}`)
          .join(", ");
        parts.push(
          `call_${index} as (insert into ${c.name} (${columns}) select ${selected} where ${held}
            on conflict ("principal", "session_id", "turn_id", "call_index") do update set ${replace})`,
        );
      });
      if (catalogs !== 0) {
        parts.push(
          `catalogs as (insert into ${this.#tables.toolCatalogs.name} ("digest", "tools")
            select key, value from jsonb_each($${catalogs}::text::jsonb) where ${held} on conflict do nothing)`,
        );
      }
      if (transcriptValues) {
        const [floor, items] = transcriptValues;
        const x = this.#tables.transcriptItems.name;
        const written = `select (item->>0)::integer from jsonb_array_elements($${items}::text::jsonb) as written(item)`;
        parts.push(
          `stale as (delete from ${x} where ${keyWhere} and "position" >= $${floor}::integer and "position" not in (${written}) and ${held})`,
          `items as (insert into ${x} ("principal", "session_id", "position", "item")
            select $1, $2, (item->>0)::integer, item->1 from jsonb_array_elements($${items}::text::jsonb) as written(item) where ${held}
            on conflict ("principal", "session_id", "position") do update set "item" = excluded."item")`,
        );
      }
      if (write.turn !== undefined) {
        const assignments = turnColumns.map(
          (column, index) => `${t.column(column)} = ${t.param(column, turnValues[index] ?? 0)}`,
        );
        parts.push(
          `turned as (update ${t.name} set ${assignments.join(", ")} where ${keyWhere} and "turn_id" = $${turnId} and ${held})`,
        );
      }
      text = `with ${parts.join(",\n")}\nselect count(*)::integer as "held" from held`;
      this.#texts.set(shape, text);
    }
    return { text, params };
  }
}

/** `{"<digest>": <tools>, …}`: the catalogs' texts are JSON already, and digests (base64url) need no escaping. */
function catalogsJson(catalogs: ReadonlyMap<string, string>): string {
  return `{${[...catalogs].map(([digest, tools]) => `"${digest}":${tools}`).join(",")}}`;
}

/**
 * The transcript that calls' progress writes, applied in order (each replaces every item from its position
 * on): the items to keep by position, and the first position written, from which every other item goes.
 */
function mergedTranscript(
  calls: HeldWrite["calls"],
): { floor: number; items: [number, TranscriptItem][] } | undefined {
  let floor: number | undefined;
  const items = new Map<number, TranscriptItem>();
  for (const { progress } of calls) {
    if (progress === undefined) continue;
    floor = Math.min(floor ?? progress.fromPosition, progress.fromPosition);
    for (const position of [...items.keys()]) if (position >= progress.fromPosition) items.delete(position);
    progress.items.forEach((item, offset) => {
      items.set(progress.fromPosition + offset, item);
    });
  }
  return floor === undefined ? undefined : { floor, items: [...items] };
}
