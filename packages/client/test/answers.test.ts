import { describe, expect, it } from "vitest";
import { AptixClient, AptixProtocolError, type RetryOptions } from "../src/index.js";

// These tests check how answers are read and retried, not the server: a stub `fetch` returns crafted answers.
function stubbedClient(
  answers: Array<() => Response>,
  retry: RetryOptions = { baseDelayMs: 1, maxDelayMs: 5 },
) {
  const requests: Request[] = [];
  const fetchImpl: typeof fetch = async (input, init) => {
    requests.push(new Request(input, init));
    const next = answers.shift();
    if (next === undefined) throw new Error("no answer left");
    return next();
  };
  return { client: new AptixClient({ baseUrl: "http://aptix.test/", fetch: fetchImpl, retry }), requests };
}

const json =
  (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  () =>
    new Response(JSON.stringify(body), {
      status,
      headers: { "content-type": "application/json", ...headers },
    });

const busy = json(
  { successful: false, errors: [{ code: "SESSION_BUSY", message: "Busy." }], warnings: [] },
  409,
  { "retry-after": "0" },
);
/** A success with a final "Hi.", and any fields a later version adds to the response. */
const finalBody = (extra: Record<string, unknown> = {}) => {
  const result = { kind: "final", sessionId: "s1", turnId: "t1", modeDisplayName: "General" };
  return {
    successful: true,
    result: { ...result, primaryOutputText: "Hi.", ...extra },
    errors: [],
    warnings: [],
  };
};
const final = (extra: Record<string, unknown> = {}) => json(finalBody(extra));
const turn = { sessionId: "s1", turnId: "t1", instruction: "Hello" };

describe("tolerant parsing", () => {
  it("keeps an error code and fields this client does not know", async () => {
    const { client } = stubbedClient([
      json(
        {
          successful: false,
          errors: [
            {
              code: "QUOTA_EXCEEDED",
              message: "Out of quota.",
              details: { resetsAt: "tomorrow" },
              hint: "wait",
            },
          ],
          warnings: [{ code: "SOMETHING_NEW", message: "A note." }],
          traceId: "abc",
        },
        413,
      ),
    ]);
    const answer = await client.execute(turn);
    expect(answer).toEqual({
      successful: false,
      errors: [
        { code: "QUOTA_EXCEEDED", message: "Out of quota.", details: { resetsAt: "tomorrow" }, hint: "wait" },
      ],
      warnings: [{ code: "SOMETHING_NEW", message: "A note." }],
    });
  });

  it("reads a response with fields added in a later version", async () => {
    const { client } = stubbedClient([
      final({ citations: [{ url: "https://example.test" }], usage: { llmCalls: 1, newCounter: 3 } }),
    ]);
    const answer = await client.execute(turn);
    expect(answer).toMatchObject({
      successful: true,
      result: { primaryOutputText: "Hi.", citations: [{ url: "https://example.test" }] },
    });
  });

  it("skips stream events it does not know, and keeps text across resets right", async () => {
    const sse = [
      'event: output_text.delta\ndata: {"delta":"Thinking"}\nid: 0-0\n\n',
      "event: output_text.reset\ndata: {}\nid: 0-1\n\n",
      'event: progress\ndata: {"step":2}\nid: 0-2\n\n',
      ": keep-alive\n\n",
      'event: output_text.delta\ndata: {"delta":"Hi.","extra":true}\nid: 0-3\n\n',
      `event: result\ndata: ${JSON.stringify(finalBody())}\nid: 0-result\n\n`,
    ].join("");
    const { client } = stubbedClient([
      () => new Response(sse, { headers: { "content-type": "text/event-stream" } }),
    ]);
    const shown: string[] = [];
    const answer = await client.runTurn({
      ...turn,
      tools: {},
      onTextDelta: (_delta, text) => shown.push(text),
      onTextReset: () => shown.push("<reset>"),
    });
    expect(answer.successful && answer.result.primaryOutputText).toBe("Hi.");
    expect(shown).toEqual(["Thinking", "<reset>", "Hi."]);
  });

  it("throws AptixProtocolError for a body that is not an InvokeResult", async () => {
    const { client } = stubbedClient([() => new Response("<html>Bad gateway</html>", { status: 502 })]);
    await expect(client.execute(turn)).rejects.toBeInstanceOf(AptixProtocolError);
    const { client: other } = stubbedClient([
      json({ successful: true, result: { kind: "final" }, errors: [], warnings: [] }),
    ]);
    await expect(other.execute(turn)).rejects.toThrow("not an InvokeResult");
  });
});

describe("retries", () => {
  it("retries a 503 after its Retry-After, then returns the answer", async () => {
    const { client, requests } = stubbedClient([
      json(
        { successful: false, errors: [{ code: "NOT_READY", message: "No database." }], warnings: [] },
        503,
        {
          "retry-after": "0.2",
        },
      ),
      final(),
    ]);
    const started = Date.now();
    const answer = await client.execute(turn);
    expect(answer.successful).toBe(true);
    expect(requests).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(await requests[1]?.json()).toEqual(turn);
  });

  it("stops after maxAttempts and returns the last answer", async () => {
    const { client, requests } = stubbedClient([busy, busy, busy, final()], {
      baseDelayMs: 1,
      maxDelayMs: 5,
      maxAttempts: 3,
    });
    const answer = await client.execute(turn);
    expect(answer.errors[0]).toMatchObject({ code: "SESSION_BUSY" });
    expect(requests).toHaveLength(3);
  });

  it("never retries other failures, nor TURN_INTERRUPTED (a stored answer)", async () => {
    for (const code of ["TURN_ID_CONFLICT", "TURN_INTERRUPTED", "PROVIDER_ERROR"]) {
      const status = { TURN_ID_CONFLICT: 409, TURN_INTERRUPTED: 503, PROVIDER_ERROR: 502 }[code];
      const { client, requests } = stubbedClient([
        json({ successful: false, errors: [{ code, message: "No." }], warnings: [] }, status),
        final(),
      ]);
      expect((await client.execute(turn)).errors[0]?.code).toBe(code);
      expect(requests).toHaveLength(1);
    }
  });

  it("gives up on a stream that keeps breaking after maxAttempts resumes in a row", async () => {
    let n = 0;
    const broken = () =>
      new Response(`event: output_text.delta\ndata: {"delta":"${n}"}\nid: 0-${n++}\n\n`, {
        headers: { "content-type": "text/event-stream" },
      });
    const silent = () => new Response("", { headers: { "content-type": "text/event-stream" } });
    const { client, requests } = stubbedClient([broken, broken, silent, silent, silent], {
      baseDelayMs: 1,
      maxDelayMs: 5,
      maxAttempts: 2,
    });
    const deltas: string[] = [];
    const reading = (async () => {
      for await (const event of client.stream(turn))
        if (event.type === "output_text.delta") deltas.push(event.delta);
    })();
    await expect(reading).rejects.toBeInstanceOf(AptixProtocolError);
    expect(deltas).toEqual(["0", "1"]);
    // A resume that brings an event starts the count again; two in a row without one are the limit.
    expect(requests.map((request) => request.headers.get("last-event-id"))).toEqual([
      null,
      "0-0",
      "0-1",
      "0-1",
    ]);
  });

  it("stops waiting as soon as the signal aborts", async () => {
    const slowBusy = json(
      { successful: false, errors: [{ code: "SESSION_BUSY", message: "Busy." }], warnings: [] },
      409,
      { "retry-after": "30" },
    );
    const { client, requests } = stubbedClient([slowBusy, final()]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const started = Date.now();
    await expect(client.execute(turn, { signal: controller.signal })).rejects.toMatchObject({
      name: "AbortError",
    });
    expect(Date.now() - started).toBeLessThan(5000);
    // The busy request, then the turn's cancel, which the abort sends.
    expect(requests.map((request) => `${request.method} ${new URL(request.url).pathname}`)).toEqual([
      "POST /v1/agent/execute",
      `POST /v1/sessions/${turn.sessionId}/turns/${turn.turnId}/cancel`,
    ]);
  });

  it("sends the API key and keeps a base URL's path", async () => {
    const requests: Request[] = [];
    const client = new AptixClient({
      baseUrl: "https://example.test/aptix/",
      apiKey: "k-123",
      fetch: async (input, init) => {
        requests.push(new Request(input, init));
        return final()();
      },
    });
    await client.execute(turn);
    expect(requests[0]?.url).toBe("https://example.test/aptix/v1/agent/execute");
    expect(requests[0]?.headers.get("authorization")).toBe("Bearer k-123");
  });
});
