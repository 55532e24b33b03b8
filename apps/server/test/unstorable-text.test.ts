import type { SessionStores, TurnStore } from "@aptix/core";
import { type AptixStore, openStore } from "@aptix/store-drizzle";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_CATALOG } from "../src/config/default-catalog.js";
import { loggingFaults } from "../src/telemetry/logging-faults.js";
import { ServiceMetrics } from "../src/telemetry/service-metrics.js";
import { capturedLog } from "./captured-log.js";
import { setup } from "./http-app-setup.js";

/**
 * Postgres (embedded PGlite here) refuses U+0000 and lone UTF-16 surrogates: whatever carried one to the store
 * would answer 500. The contracts refuse them in every text field of a request, and the routes refuse them in
 * every path id, so the answer is always 400 or 404, and nothing is written. Should a write still be refused, the
 * round fails INTERNAL with the request id and nothing of the driver's message, and the session goes on.
 */

type Path = readonly (string | number)[];

/** The path of every string in `value`. */
function stringPaths(value: unknown, path: Path = []): Path[] {
  if (typeof value === "string") return [path];
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([key, entry]) =>
    stringPaths(entry, [...path, Array.isArray(value) ? Number(key) : key]),
  );
}

/** A copy of `value` whose string at `path` is `change` of it. */
function changedAt<T>(value: T, path: Path, change: (text: string) => string): T {
  const copy = structuredClone(value);
  const parent = path
    .slice(0, -1)
    .reduce<Record<string | number, unknown>>((node, key) => node[key] as never, copy as never);
  const last = path.at(-1) as string | number;
  parent[last] = change(parent[last] as string);
  return copy;
}

/** The written form of a field path, as the contracts' field errors give it. */
const pathText = (path: Path) =>
  path.map((key, index) => (typeof key === "number" ? `[${key}]` : index === 0 ? key : `.${key}`)).join("");

/** Halves of 📄 (U+1F4C4) and the ends of the surrogate range. */
const loneSurrogate = fc.constantFrom("\uD83D", "\uDCC4", "\uD800", "\uDFFF");

/** Inserted between two code points, a surrogate never completes a pair: it stays alone. */
const withLoneSurrogate = fc.tuple(loneSurrogate, fc.nat()).map(([half, at]) => (text: string) => {
  const points = [...text];
  points.splice(at % (points.length + 1), 0, half);
  return points.join("");
});

/** A user turn with every field a user turn has, so every text field can be damaged. */
const userTurn = (sessionId: string) => ({
  sessionId,
  turnId: "turn-1",
  instruction: "Explain 📄 this file",
  inputArtifacts: [
    {
      relativePath: "src/📄/index.ts",
      fileName: "index.ts",
      contents: "export const answer = 42; // 📄\n",
      origin: "ide",
      mimeType: "text/x-typescript",
      language: "typescript",
      encoding: "utf8",
    },
  ],
  clipboardImages: [{ id: "img-1", mimeType: "image/png", dataBase64: "iVBORw0KGgo=" }],
  ragScope: [{ key: "repo", operator: "==", values: ["acme/app", "📄"] }],
  solutionContextText: "npm, TypeScript 📄",
  workspaceId: "ws-1",
  repo: "acme/app",
  language: "typescript",
  stream: false,
  agentContextId: "agent-1",
  conversationContextId: "default",
});

/** Tool results of both kinds, for a turn awaiting `call_1`. */
const continuations = (sessionId: string) => [
  {
    sessionId,
    turnId: "turn-1",
    toolResults: [{ toolCallId: "call_1", executionMs: 3, resultJson: '{"text":"📄"}' }],
  },
  {
    sessionId,
    turnId: "turn-1",
    toolResults: [{ toolCallId: "call_1", executionMs: 3, errorMessage: "ENOENT 📄" }],
  },
];

interface Failure {
  successful: false;
  errors: Array<{
    code: string;
    message: string;
    details?: { fields?: Array<{ path: string; message: string }> };
  }>;
}

// Opening the embedded PGlite takes seconds on a loaded machine.
describe("text Postgres cannot keep", { timeout: 120_000 }, () => {
  let store: AptixStore;
  // No time limit: PGlite's initdb (a child process) either ends or fails, however busy the machine.
  beforeAll(async () => {
    store = await openStore("memory://");
  }, 0);
  afterAll(() => store?.close());

  // The properties below send hundreds of requests as one key, every route × method: no rate limit between them.
  const app = () =>
    setup({ store: store.sessions, files: store.files, events: store.events, rateLimitRpm: 1_000_000 });
  let sessions = 0;
  const freshSessionId = () => `session-${++sessions}`;

  it("runs the undamaged requests, so the damage alone is what gets refused", async () => {
    const { post, provider } = app();
    provider.enqueue({
      toolCalls: [
        { name: "read_file", arguments: { path: "a", startLine: null, endLine: null }, callId: "call_1" },
      ],
    });
    const sessionId = freshSessionId();
    expect((await post(userTurn(sessionId))).status).toBe(200);
    provider.enqueue({ text: "Done." });
    expect((await post(continuations(sessionId)[0])).status).toBe(200);
  });

  it("refuses a lone surrogate in any text field of a user turn with 400 naming the field, and keeps no session", async () => {
    const { post, get, provider } = app();
    const base = userTurn("any");
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...stringPaths(base)), withLoneSurrogate, async (path, damage) => {
        const sessionId = freshSessionId();
        const response = await post(changedAt(userTurn(sessionId), path, damage));
        expect(response.status).toBe(400);
        const body = (await response.json()) as Failure;
        expect(body.errors[0]?.code).toBe("VALIDATION_FAILED");
        expect(body.errors[0]?.details?.fields?.map((field) => field.path)).toContain(pathText(path));
        expect((await get(`/v1/sessions/${sessionId}`)).status).toBe(404);
      }),
      { numRuns: 60 },
    );
    expect(provider.requests).toHaveLength(0);
  });

  it("refuses a lone surrogate in any text field of a tool continuation with 400, and leaves the turn as it was", async () => {
    const { post, get, provider } = app();
    provider.enqueue({
      toolCalls: [
        { name: "read_file", arguments: { path: "a", startLine: null, endLine: null }, callId: "call_1" },
      ],
    });
    const sessionId = freshSessionId();
    expect((await post(userTurn(sessionId))).status).toBe(200);
    const before = await (await get(`/v1/sessions/${sessionId}/turns/turn-1/trace`)).json();
    await fc.assert(
      fc.asyncProperty(
        fc
          .constantFrom(...continuations(sessionId))
          .chain((continuation) =>
            fc.tuple(fc.constant(continuation), fc.constantFrom(...stringPaths(continuation))),
          ),
        withLoneSurrogate,
        async ([continuation, path], damage) => {
          const response = await post(changedAt(continuation, path, damage));
          expect(response.status).toBe(400);
          const body = (await response.json()) as Failure;
          expect(body.errors[0]?.details?.fields?.map((field) => field.path)).toContain(pathText(path));
        },
      ),
      { numRuns: 40 },
    );
    // Still awaiting the same tool call, with one round: the session has its one turn, unchanged.
    expect(await (await get(`/v1/sessions/${sessionId}/turns/turn-1/trace`)).json()).toEqual(before);
    expect(before).toMatchObject({ result: { status: "awaiting_client_tools", rounds: [{}] } });
    expect(provider.requests).toHaveLength(1);
  });

  it("answers a NUL, or an escape of no UTF-8, in any id of any GET path with 404, as for an unknown id", async () => {
    const { app: http, get, post, provider } = app();
    provider.enqueue({ text: "Hello." });
    const sessionId = freshSessionId();
    expect((await post({ sessionId, turnId: "turn-1", instruction: "Hi", stream: true })).status).toBe(200);
    const known: Record<string, string> = { sessionId, turnId: "turn-1", fileId: "file_0" };
    const routes = [
      ...new Set(http.routes.filter((route) => route.method === "GET").map((route) => route.path)),
    ];
    const idsOf = (route: string) => [...route.matchAll(/:(\w+)/g)].map((match) => match[1] as string);
    const pathOf = (route: string, ids: Record<string, string>) =>
      route.replace(/:(\w+)/g, (_, name: string) => ids[name] as string);
    /** `body` with the id `from` made `to`, where it is a value and where a message quotes it. */
    const withId = (body: unknown, from: string, to: string): unknown =>
      JSON.parse(JSON.stringify(body), (_key, value: unknown) =>
        typeof value !== "string"
          ? value
          : value === from
            ? to
            : value.replaceAll(JSON.stringify(from), () => JSON.stringify(to)),
      );
    // [as sent in the path, as Hono reads it]: a NUL decodes; invalid UTF-8 (a lone surrogate's bytes, an
    // overlong NUL) stays as it was sent.
    const badId = fc.oneof(
      fc
        .string({ maxLength: 8 })
        .map((text) => `${text}\u0000`)
        .map((id): [string, string] => [encodeURIComponent(id), id]),
      fc
        .constantFrom("%ED%A0%80", "%C0%80", "a%F0%9F", "%ED%B3%84x")
        .map((raw): [string, string] => [raw, raw]),
    );
    const routeId = fc
      .constantFrom(...routes.filter((route) => idsOf(route).length > 0))
      .chain((route) => fc.tuple(fc.constant(route), fc.constantFrom(...idsOf(route))));

    await fc.assert(
      fc.asyncProperty(routeId, badId, async ([route, name], [sent, read]) => {
        const response = await get(pathOf(route, { ...known, [name]: sent }));
        const unknown = await get(pathOf(route, { ...known, [name]: "no-such-id" }));
        // A chat's resume and messages answer an unknown chat as one with nothing yet (204, `[]`): useChat
        // asks them of a chat before its first message.
        const asUnknown =
          route === "/v1/chat/:id/stream" ? 204 : route === "/v1/chat/:id/messages" ? 200 : 404;
        expect(unknown.status).toBe(asUnknown);
        expect(response.status).toBe(asUnknown);
        if (asUnknown === 204) expect(await response.text()).toBe("");
        else expect(await response.json()).toEqual(withId(await unknown.json(), "no-such-id", read));
      }),
      { numRuns: 60 },
    );
    expect(routes.length).toBeGreaterThanOrEqual(4);
  });

  it("keeps nothing from a body with a lone surrogate, whatever route and method it is sent to", async () => {
    const { app: http } = app();
    const paths = [...new Set(http.routes.map((route) => route.path.replace(/:\w+/g, "x")))];
    for (const path of paths) {
      for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
        await fc.assert(
          fc.asyncProperty(withLoneSurrogate, async (damage) => {
            const sessionId = freshSessionId();
            const response = await http.request(path, {
              method,
              headers: { "content-type": "application/json", authorization: "Bearer alice-key-0123456789" },
              body: JSON.stringify({ sessionId, turnId: "turn-1", instruction: damage("Hi") }),
            });
            expect(response.status, `${method} ${path}`).toBeGreaterThanOrEqual(400);
            expect(response.status, `${method} ${path}`).toBeLessThan(500);
            const session = await http.request(`/v1/sessions/${sessionId}`, {
              headers: { authorization: "Bearer alice-key-0123456789" },
            });
            expect(session.status).toBe(404);
          }),
          { numRuns: 3 },
        );
      }
    }
  });

  it("fails a round whose write Postgres refuses INTERNAL, quoting nothing of it, and takes the next turn at once", async () => {
    const { logger, lines } = capturedLog();
    const faulty = refusingOnce(store.sessions);
    const { post, provider } = setup({
      store: faulty.store,
      files: store.files,
      events: store.events,
      logger,
      service: {
        observer: loggingFaults(new ServiceMetrics({ dbPoolInUse: () => 0 }).observer, logger),
        eventFlushMs: 5,
      },
    });
    const bootPrompt = DEFAULT_CATALOG.conversationContexts[0]?.bootPrompt ?? "";
    expect(bootPrompt.length).toBeGreaterThan(20);
    for (const stream of [false, true]) {
      const sessionId = freshSessionId();
      provider.enqueue({ text: "Refused." }, { text: "Next." });
      faulty.refuseNextSettle();
      const refused = await post({ sessionId, turnId: "turn-1", instruction: "Hi", stream });
      const text = await refused.text();
      const requestId = refused.headers.get("x-request-id");
      // Streamed, the failure is the stream's `result` event.
      const body = (
        stream ? JSON.parse(text.match(/event: result\ndata: (.*)\n/)?.[1] ?? "null") : JSON.parse(text)
      ) as Failure;
      expect(refused.status).toBe(stream ? 200 : 500);
      expect(body.errors).toEqual([
        {
          code: "INTERNAL",
          message: "The turn failed unexpectedly; the request id identifies it in the service's logs.",
          details: { requestId },
        },
      ]);
      const next = await post({ sessionId, turnId: "turn-2", instruction: "Again" });
      expect(next.status).toBe(200);
      for (const answer of [text, JSON.stringify(lines)]) {
        expect(answer).not.toMatch(/Failed query|params|insert into|update "|\\u0000/i);
        expect(answer).not.toContain(bootPrompt.slice(0, 20));
      }
    }
    expect(faulty.refusals()).toBe(2);
    // What failed, in a line without its message: the driver's SQLSTATE for text Postgres cannot keep.
    expect(lines.filter((line) => line.message === "round failed unexpectedly")).toEqual([
      expect.objectContaining({
        turnId: "turn-1",
        fault: expect.objectContaining({ causes: [expect.objectContaining({ code: "22P05" })] }),
      }),
      expect.objectContaining({
        turnId: "turn-1",
        fault: expect.objectContaining({ causes: [expect.objectContaining({ code: "22P05" })] }),
      }),
    ]);
  });
});

/**
 * `sessions`, whose next settling write, once asked, carries a NUL the store refuses (as text that escaped every
 * check would): the database's own refusal, with its driver's message quoting the statement and its parameters.
 */
function refusingOnce(sessions: SessionStores) {
  let refuse = false;
  let refusals = 0;
  const { turns } = sessions;
  const write: TurnStore["write"] = (write) => {
    const [first, ...rest] = write.turnPatches ?? [];
    if (!refuse || write.guard !== "lease" || !write.releaseLease || first === undefined)
      return turns.write(write);
    refuse = false;
    refusals += 1;
    const damaged = {
      ...first,
      patch: { ...first.patch, error: { code: "INTERNAL" as const, message: "bad \u0000" } },
    };
    return turns.write({ ...write, turnPatches: [damaged, ...rest] });
  };
  const refusing = new Proxy(turns, {
    get: (target, property) => (property === "write" ? write : Reflect.get(target, property, target)),
  });
  const store = { ...sessions, turns: refusing };
  return { store, refuseNextSettle: () => (refuse = true), refusals: () => refusals };
}
