import { type AgentExecuteRequest, isToolContinuationRequest } from "@aptix/contracts";
import type { EventSourceMessage } from "eventsource-parser";
import { abortableSleep } from "./abortable-sleep.js";
import { AptixProtocolError } from "./aptix-protocol-error.js";
import { backoffDelay } from "./backoff-delay.js";
import { type HttpTransport, jsonBody } from "./http-transport.js";
import { readExecuteResult } from "./lenient-schemas.js";
import { serverSentEvents } from "./server-sent-events.js";
import type { TurnStreamEvent } from "./turn-stream-event.js";

/**
 * The events of one round (`POST /v1/agent/execute`) until its `result`. A JSON answer (a request refused
 * before its round ran, a stored answer, a request that does not stream) is one `result` event. When the
 * connection breaks before the result, the round is followed again from the last event id seen with
 * `GET …/turns/:turnId/events` and `Last-Event-ID`, so no text is lost or repeated. With no event seen yet, a
 * user turn is followed from its first event, the `round`-th continuation from the end of the round before
 * (`<round - 1>-result`), and a continuation whose round is unknown is sent again (requests are idempotent).
 */
export async function* streamRound(
  transport: HttpTransport,
  request: AgentExecuteRequest,
  signal: AbortSignal | undefined,
  round?: number,
): AsyncGenerator<TurnStreamEvent> {
  const execute = () => transport.send("POST", "/v1/agent/execute", { body: request, signal });
  const events = `/v1/sessions/${encodeURIComponent(request.sessionId)}/turns/${encodeURIComponent(request.turnId)}/events`;
  let lastEventId: string | undefined;
  let response = await execute();
  for (let reconnects = 0; ; ) {
    if (!(response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
      yield {
        type: "result",
        id: undefined,
        result: executeResult(response.status, await jsonBody(response)),
      };
      return;
    }
    try {
      for await (const message of serverSentEvents(requireBody(response))) {
        if (message.id !== undefined) {
          lastEventId = message.id;
          reconnects = 0;
        }
        const event = toStreamEvent(message, response.status);
        if (event === undefined) continue;
        yield event;
        if (event.type === "result") return;
      }
    } catch (error) {
      // An abort ends the stream; a broken connection is resumed below.
      if (signal?.aborted || error instanceof AptixProtocolError) throw error;
    }
    reconnects++;
    if (reconnects > transport.retry.maxAttempts) {
      throw new AptixProtocolError(
        `The event stream of turn ${request.turnId} broke ${reconnects} times in a row before its result.`,
      );
    }
    if (reconnects > 1) await abortableSleep(backoffDelay(reconnects - 1, null, transport.retry), signal);
    const resumeAfter = lastEventId ?? startOf(request, round);
    try {
      response =
        resumeAfter === null
          ? await execute()
          : await transport.send("GET", events, {
              headers: resumeAfter === undefined ? {} : { "last-event-id": resumeAfter },
              signal,
            });
    } catch (error) {
      if (signal?.aborted) throw error;
      // The server could not be reached: try again, as for a broken stream.
      response = new Response(null, { headers: { "content-type": "text/event-stream" } });
    }
  }
}

/** Where a round's events start: `undefined` for the turn's first event, `null` when that is unknown. */
function startOf(request: AgentExecuteRequest, round: number | undefined): string | undefined | null {
  if (!isToolContinuationRequest(request)) return undefined;
  return round === undefined ? null : `${round - 1}-result`;
}

function requireBody(response: Response): ReadableStream<Uint8Array> {
  if (response.body === null) throw new AptixProtocolError("The event stream has no body.");
  return response.body;
}

function executeResult(status: number, body: unknown) {
  const result = readExecuteResult(body);
  if (result === undefined) {
    throw new AptixProtocolError(`HTTP ${status}: the body is not an InvokeResult of AgentExecuteResponse`, {
      status,
    });
  }
  return result;
}

/** The typed event of a message; `undefined` for an event name this client does not know (a later addition). */
function toStreamEvent(message: EventSourceMessage, status: number): TurnStreamEvent | undefined {
  const id = message.id ?? "";
  switch (message.event) {
    case "output_text.delta": {
      const data = parseData(message.data, status) as { delta?: unknown };
      if (typeof data.delta !== "string") throw new AptixProtocolError("A delta event without its delta.");
      return { type: "output_text.delta", id, delta: data.delta };
    }
    case "output_text.reset":
      return { type: "output_text.reset", id };
    case "context.compacted": {
      const data = parseData(message.data, status);
      const count = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : 0);
      return {
        type: "context.compacted",
        id,
        tokensBefore: count(data.tokensBefore),
        tokensAfter: count(data.tokensAfter),
        reason: typeof data.reason === "string" ? data.reason : "threshold",
      };
    }
    case "result":
      return {
        type: "result",
        id: message.id,
        result: executeResult(status, parseData(message.data, status)),
      };
    default:
      return undefined;
  }
}

function parseData(data: string, status: number): Record<string, unknown> {
  try {
    const value = JSON.parse(data) as unknown;
    if (typeof value === "object" && value !== null) return value as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new AptixProtocolError(`An event's data is not a JSON object: ${data.slice(0, 200)}`, { status });
}
