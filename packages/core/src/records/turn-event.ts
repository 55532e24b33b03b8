import type { AgentExecuteResponse, InvokeResult, TurnEvent } from "@aptix/contracts";

/** One server-sent event of a streamed turn: defined in @aptix/contracts (`TurnEventSchema`). */
export type { TurnEvent } from "@aptix/contracts";

/**
 * A text delta or reset as the event log keeps it. A reset is kept as an empty delta: no delta is ever empty
 * (the recorder drops empty text), so stores keep one column for both.
 */
export interface StoredDelta {
  round: number;
  seq: number;
  delta: string;
  /** Another event than a delta or a reset, kept in order among them, its data as JSON in `delta`. */
  event?: "context.compacted";
}

/** The stored form of an `output_text.reset`. */
export const RESET_DELTA = "";

/** Where a client stands in a turn's events: after delta `seq` of `round`, or after the round's result. */
export type EventPosition = { round: number; seq: number } | { round: number; result: true };

export function deltaEvent({ round, seq, delta, event }: StoredDelta): TurnEvent {
  const id = `${round}-${seq}`;
  if (event === "context.compacted") return { id, event, data: JSON.parse(delta) };
  return delta === RESET_DELTA
    ? { id, event: "output_text.reset", data: {} }
    : { id, event: "output_text.delta", data: { delta } };
}

/** A compaction as the event log keeps it, among the round's deltas. */
export function compactedDelta(
  round: number,
  seq: number,
  data: Extract<TurnEvent, { event: "context.compacted" }>["data"],
): StoredDelta {
  return { round, seq, delta: JSON.stringify(data), event: "context.compacted" };
}

/** The highest delta `seq` an event id may carry: a position after every delta a round can have. */
const LAST_SEQ = 999_999_999;

/**
 * A stored answer's text as one delta (none when it has no text), for a request sent again as a stream: the
 * deltas since the last reset then add up to the answer. It is not in the log, so its id names the end of the
 * round's deltas: a client resuming after it gets the round's result.
 */
export function storedAnswerEvents(round: number, result: InvokeResult<AgentExecuteResponse>): TurnEvent[] {
  if (!result.successful) return [];
  const answer = result.result;
  const text = answer.kind === "final" ? answer.primaryOutputText : (answer.toolContinuationMessage ?? "");
  return text === ""
    ? []
    : [{ id: `${round}-${LAST_SEQ}`, event: "output_text.delta", data: { delta: text } }];
}

export function resultEvent(round: number, result: InvokeResult<AgentExecuteResponse>): TurnEvent {
  return { id: `${round}-result`, event: "result", data: result };
}

/** Reads a `Last-Event-ID`; undefined when it is not one of ours. */
export function parseEventId(id: string): EventPosition | undefined {
  const match = /^(\d{1,6})-(\d{1,9}|result)$/.exec(id);
  if (!match) return undefined;
  const round = Number(match[1]);
  return match[2] === "result" ? { round, result: true } : { round, seq: Number(match[2]) };
}
