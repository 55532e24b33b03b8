export interface RecordedCall {
  method: string;
  path: string;
  lastEventId: string | null;
  body: unknown;
  /** The answer's HTTP status, once it came. */
  status: number | undefined;
}

/**
 * The global `fetch`, recording each call; `rewrite` may replace an answer (to break its stream, say). The
 * requests still reach the real server.
 */
export function recordingFetch(rewrite?: (response: Response, call: RecordedCall) => Response) {
  const calls: RecordedCall[] = [];
  const fetchImpl: typeof fetch = async (input, init) => {
    const call: RecordedCall = {
      method: init?.method ?? "GET",
      path: new URL(String(input)).pathname,
      lastEventId: new Headers(init?.headers).get("last-event-id"),
      body: typeof init?.body === "string" ? JSON.parse(init.body) : undefined,
      status: undefined,
    };
    calls.push(call);
    const response = await fetch(input, init);
    call.status = response.status;
    return rewrite ? rewrite(response, call) : response;
  };
  return { fetch: fetchImpl, calls };
}

/**
 * An event stream that breaks like a dropped connection: it passes the first `events` complete events and
 * `extraBytes` of the next one (a half event, which the client must drop), then errors, and cancels the
 * server's stream.
 */
export function cutAfterEvents(response: Response, events: number, extraBytes = 12): Response {
  const source = response.body?.getReader();
  if (source === undefined) return response;
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let text = "";
  let forwarded = 0;
  let cut = false;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      // Erroring drops what is still queued, so the cut comes at the read after the last bytes.
      if (cut) {
        controller.error(new TypeError("terminated: the test cut the connection"));
        await source.cancel();
        return;
      }
      for (;;) {
        const chunk = await source.read();
        if (chunk.done) {
          controller.close();
          return;
        }
        text += decoder.decode(chunk.value, { stream: true });
        const boundary = events === 0 ? -2 : [...text.matchAll(/\n\n/g)][events - 1]?.index;
        const limit = boundary === undefined ? Number.POSITIVE_INFINITY : boundary + 2 + extraBytes;
        const end = Math.min(text.length, limit);
        const enqueued = end > forwarded;
        if (enqueued) controller.enqueue(encoder.encode(text.slice(forwarded, end)));
        forwarded = end;
        cut = text.length >= limit;
        if (enqueued || cut) return;
      }
    },
  });
  return new Response(body, { status: response.status, headers: response.headers });
}

/** Polls `condition` every 10 ms until it holds; throws after `timeoutMs`. */
export async function waitFor(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
