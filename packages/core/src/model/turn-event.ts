import type { AgentExecuteResponse, InvokeResult } from "@aptix/contracts";

/**
 * One server-sent event of a streamed turn (docs/http-api.md, Streaming). Ids order the turn's events across its
 * rounds: `<round>-<n>` for text deltas, `<round>-result` for the round's one result.
 */
export type TurnEvent =
  | { id: string; event: "output_text.delta"; data: { delta: string } }
  | { id: string; event: "result"; data: InvokeResult<AgentExecuteResponse> };

/** A text delta as the event log keeps it. */
export interface StoredDelta {
  round: number;
  seq: number;
  delta: string;
}

/** Where a client stands in a turn's events: after delta `seq` of `round`, or after the round's result. */
export type EventPosition = { round: number; seq: number } | { round: number; result: true };

export function deltaEvent({ round, seq, delta }: StoredDelta): TurnEvent {
  return { id: `${round}-${seq}`, event: "output_text.delta", data: { delta } };
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
