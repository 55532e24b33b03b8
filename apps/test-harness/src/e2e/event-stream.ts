/**
 * A `fetch` client for the server's `text/event-stream` answers (docs/http-api.md, Streaming), read incrementally:
 * each event is parsed as its bytes arrive, so a test can act on the first delta while the turn still runs,
 * abort mid-turn, and resume from the events route with `Last-Event-ID`.
 */
import { type AgentExecuteResponse, AgentExecuteResultSchema, type InvokeResult } from "@aptix/contracts";

/** One server-sent event as received. */
export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
  /** `performance.now()` when its terminating blank line arrived. */
  receivedAt: number;
}

/** One comment line (`: keep-alive`), as received. */
interface SseComment {
  text: string;
  receivedAt: number;
  /** How many events had arrived before it. */
  afterEvents: number;
}

export interface EventStream {
  status: number;
  headers: Headers;
  /** Every event received so far, in order (comments excluded). */
  readonly events: SseEvent[];
  /** Every comment line received so far. */
  readonly comments: SseComment[];
  /** The body's bytes received so far: what a reader that paces itself counts. */
  readonly bytesRead: number;
  /** The next event; `undefined` once the stream has ended (or was aborted). */
  next(): Promise<SseEvent | undefined>;
  /** Reads to the end of the stream and answers every event of it (those already read included). */
  readToEnd(): Promise<SseEvent[]>;
  /** Drops the connection (the client going away mid-turn). */
  abort(): void;
}

interface EventStreamRequest {
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: unknown;
}

/**
 * Sends the request and answers once the response headers are in. The answer must be `text/event-stream`:
 * anything else throws with its status and body.
 */
async function openEventStream(url: string, request: EventStreamRequest = {}): Promise<EventStream> {
  const controller = new AbortController();
  const headers: Record<string, string> = { accept: "text/event-stream", ...request.headers };
  if (request.body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(url, {
    method: request.method ?? (request.body === undefined ? "GET" : "POST"),
    headers,
    signal: controller.signal,
    ...(request.body !== undefined ? { body: JSON.stringify(request.body) } : {}),
  });
  const contentType = response.headers.get("content-type") ?? "";
  if (!contentType.startsWith("text/event-stream") || !response.body) {
    const text = await response.text();
    throw new Error(`${url} answered ${response.status} ${contentType} instead of an event stream: ${text}`);
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const events: SseEvent[] = [];
  const comments: SseComment[] = [];
  let read = 0;
  let bytesRead = 0;
  let ended = false;
  let pending = "";
  let current: { id?: string; event?: string; data: string[] } = { data: [] };

  const takeLine = (line: string) => {
    const now = performance.now();
    if (line === "") {
      if (current.data.length > 0 || current.event !== undefined || current.id !== undefined) {
        const event: SseEvent = { data: current.data.join("\n"), receivedAt: now };
        if (current.id !== undefined) event.id = current.id;
        if (current.event !== undefined) event.event = current.event;
        events.push(event);
      }
      current = { data: [] };
      return;
    }
    if (line.startsWith(":")) {
      comments.push({ text: line.slice(1).trim(), receivedAt: now, afterEvents: events.length });
      return;
    }
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "id") current.id = value;
    else if (field === "event") current.event = value;
    else if (field === "data") current.data.push(value);
  };

  /** Reads one chunk; false once the stream is over. */
  const pump = async (): Promise<boolean> => {
    if (ended) return false;
    let chunk: Awaited<ReturnType<typeof reader.read>>;
    try {
      chunk = await reader.read();
    } catch (error) {
      if (controller.signal.aborted) {
        ended = true;
        return false;
      }
      throw error;
    }
    if (chunk.done) {
      ended = true;
      pending += decoder.decode();
      if (pending !== "") takeLine(pending);
      pending = "";
      return false;
    }
    bytesRead += chunk.value.byteLength;
    pending += decoder.decode(chunk.value, { stream: true });
    let newline = pending.search(/\r\n|\r|\n/);
    while (newline >= 0) {
      const breakLength = pending.startsWith("\r\n", newline) ? 2 : 1;
      takeLine(pending.slice(0, newline));
      pending = pending.slice(newline + breakLength);
      newline = pending.search(/\r\n|\r|\n/);
    }
    return true;
  };

  const stream: EventStream = {
    status: response.status,
    headers: response.headers,
    events,
    comments,
    get bytesRead() {
      return bytesRead;
    },
    async next() {
      while (read >= events.length) {
        if (!(await pump())) break;
      }
      const event = events[read];
      if (event !== undefined) read++;
      return event;
    },
    async readToEnd() {
      while (await pump()) {
        // keep reading
      }
      read = events.length;
      return [...events];
    },
    abort() {
      ended = true;
      controller.abort();
    },
  };
  return stream;
}

/** `Authorization: Bearer <apiKey>`; no header for `undefined` (local mode). */
function bearer(apiKey: string | undefined): Record<string, string> {
  return apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` };
}

/** `POST /v1/agent/execute`, expecting an event stream. */
export function streamExecute(serviceUrl: string, body: unknown, apiKey?: string): Promise<EventStream> {
  return openEventStream(`${serviceUrl}/v1/agent/execute`, { method: "POST", headers: bearer(apiKey), body });
}

/** `GET /v1/sessions/:sessionId/turns/:turnId/events`, from `lastEventId` when given. */
export function streamTurnEvents(
  serviceUrl: string,
  sessionId: string,
  turnId: string,
  options: { apiKey?: string; lastEventId?: string } = {},
): Promise<EventStream> {
  const headers = bearer(options.apiKey);
  if (options.lastEventId !== undefined) headers["last-event-id"] = options.lastEventId;
  return openEventStream(
    `${serviceUrl}/v1/sessions/${encodeURIComponent(sessionId)}/turns/${encodeURIComponent(turnId)}/events`,
    { headers },
  );
}

/** What a client shows at the end of a stream: the deltas since the last `output_text.reset`. */
export function shownTextOf(events: readonly SseEvent[]): string {
  let shown = "";
  for (const event of events) {
    if (event.event === "output_text.reset") shown = "";
    else if (event.event === "output_text.delta")
      shown += (JSON.parse(event.data) as { delta: string }).delta;
  }
  return shown;
}

/** The `output_text.delta` events' texts, in order. */
export function deltasOf(events: readonly SseEvent[]): string[] {
  return events
    .filter((event) => event.event === "output_text.delta")
    .map((event) => (JSON.parse(event.data) as { delta: string }).delta);
}

/**
 * The InvokeResult of a stream's one `result` event, checked against AGN-033; throws unless there is exactly
 * one and it is the last event.
 */
export function resultOf(events: readonly SseEvent[]): InvokeResult<AgentExecuteResponse> {
  const results = events.filter((event) => event.event === "result");
  if (results.length !== 1 || events.at(-1) !== results[0]) {
    throw new Error(
      `expected exactly one result event, last; got ${JSON.stringify(events.map((e) => e.event))}`,
    );
  }
  const data: unknown = JSON.parse(results[0]?.data ?? "null");
  const checked = AgentExecuteResultSchema.safeParse(data);
  if (!checked.success) {
    throw new Error(`the result event is not InvokeResult<AgentExecuteResponse>: ${JSON.stringify(data)}`);
  }
  return data as InvokeResult<AgentExecuteResponse>;
}

/**
 * `{ id, event, data }` of each event with its data parsed and without arrival times: for comparing event
 * sequences. The data is compared as JSON values, not as text: a replayed `result` event comes from the store
 * (a `jsonb` column), which keeps the values but not the key order of the live event.
 */
export function comparableEvents(
  events: readonly SseEvent[],
): Array<{ id: string | undefined; event: string | undefined; data: unknown }> {
  return events.map((event) => ({ id: event.id, event: event.event, data: JSON.parse(event.data) }));
}
