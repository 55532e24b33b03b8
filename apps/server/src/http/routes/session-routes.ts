import {
  ok,
  SessionListQuerySchema,
  SessionMessagesQuerySchema,
  validateSessionForkRequest,
  validateSessionListQuery,
  validateSessionMessagesQuery,
  validateSessionRewindRequest,
} from "@aptix/contracts";
import { type AgentService, isMediaType, OPAQUE_MEDIA_TYPE } from "@aptix/core";
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { create as contentDisposition } from "content-disposition";
import type { AppEnv } from "../app-env.js";
import { readJsonBody } from "../json-body.js";
import { FILE_PARAMS, queryParameters, SESSION_PARAMS, TURN_PARAMS } from "../openapi/parameters.js";
import { EVENT_STREAM, FAILURES, jsonBody, OWNER_ONLY, success } from "../openapi/responses.js";
import { sendResult } from "../send-result.js";
import { sendEventStream } from "./event-stream.js";
import { FollowerSlots } from "./follower-slots.js";
import { followersFull } from "./followers-full.js";

const CREATED_AT = "2026-03-02T09:15:00.000Z";
const UPDATED_AT = "2026-03-02T09:16:30.000Z";
const USAGE = { inputTokens: 1840, outputTokens: 96, totalTokens: 1936, llmCalls: 1 };
const TURN = {
  turnId: "t-1",
  sequence: 1,
  status: "completed",
  mode: "general",
  usage: USAGE,
  error: null,
  createdAt: CREATED_AT,
  completedAt: UPDATED_AT,
};
const page = {
  limit: { description: "How many to answer, 1–100; 20 when absent.", example: "20" },
  cursor: {
    description: "The previous page's `nextCursor`, for the next page.",
    example: "eyJ0IjoiMjAyNi0wMy0wMlQwOToxNjozMC4wMDBaIn0",
  },
};

const listModes = createRoute({
  method: "get",
  path: "/v1/modes",
  operationId: "listModes",
  tags: ["Sessions"],
  summary: "List the modes",
  description:
    "The catalog's modes, as a client's mode picker shows them, and `defaultModeId`, the mode a new session of " +
    "the default conversation context starts in. The mode is the service's to change (`agent_change_mode`): a " +
    "client shows it (a session's current mode is its summary's `mode`), it does not set it.",
  security: OWNER_ONLY,
  responses: {
    200: success("ModeList", "The modes.", {
      modes: [
        { id: "general", displayName: "General" },
        { id: "review", displayName: "Review" },
      ],
      defaultModeId: "general",
    }),
    ...FAILURES,
  },
});

const listSessions = createRoute({
  method: "get",
  path: "/v1/sessions",
  operationId: "listSessions",
  tags: ["Sessions"],
  summary: "List the caller's sessions",
  description: "Most recently active first, a page at a time.",
  security: OWNER_ONLY,
  parameters: queryParameters(SessionListQuerySchema, {
    ...page,
    workspaceId: {
      description: "Only the sessions whose latest turn named this workspace.",
      example: "acme-web",
    },
    q: {
      description:
        "Only the sessions whose `title` holds this text, ignoring case: 1–80 characters. Pass it again with " +
        "`cursor` for the next page of the same search.",
      example: "build",
    },
  }),
  responses: {
    200: success("SessionList", "A page of sessions.", {
      sessions: [
        {
          sessionId: "s-42",
          modeDisplayName: "General",
          turnCount: 1,
          lastTurnStatus: "completed",
          workspaceId: "acme-web",
          createdAt: CREATED_AT,
          updatedAt: UPDATED_AT,
          title: "Does the build pass?",
        },
      ],
    }),
    ...FAILURES,
  },
});

const listMessages = createRoute({
  method: "get",
  path: "/v1/sessions/{sessionId}/messages",
  operationId: "listSessionMessages",
  tags: ["Sessions"],
  summary: "List a session's messages",
  description: "The conversation as a UI shows it, oldest first: a user and an assistant message per turn.",
  security: OWNER_ONLY,
  request: { params: SESSION_PARAMS },
  parameters: queryParameters(SessionMessagesQuerySchema, {
    ...page,
    include: {
      description:
        "`superseded` to show the turns a rewind went back before too; they are left out otherwise.",
      example: "superseded",
    },
  }),
  responses: {
    200: success("SessionMessages", "A page of messages.", {
      messages: [
        { turnId: "t-1", role: "user", text: "Does the build pass?", createdAt: CREATED_AT },
        { turnId: "t-1", role: "assistant", text: "The build passes.", createdAt: UPDATED_AT },
      ],
    }),
    ...FAILURES,
  },
});

const getTurn = createRoute({
  method: "get",
  path: "/v1/sessions/{sessionId}/turns/{turnId}",
  operationId: "getTurn",
  tags: ["Sessions"],
  summary: "Read a turn's status and answer",
  description:
    "The turn's status (`queued`, `running`, `awaiting_client_tools`, `completed`, …) and, once its latest round " +
    "has ended, the answer a client waiting for it got: `result` when it succeeded, `errors` when it failed. " +
    "How a background turn is polled; another principal's ids answer as unknown ones (404).",
  security: OWNER_ONLY,
  request: { params: TURN_PARAMS },
  responses: {
    200: success("TurnState", "The turn's status, and its answer once it has one.", {
      turnId: "t-1",
      status: "completed",
      result: {
        kind: "final",
        sessionId: "s-42",
        turnId: "t-1",
        modeDisplayName: "General",
        primaryOutputText: "The build passes.",
      },
    }),
    ...FAILURES,
  },
});

const cancelTurn = createRoute({
  method: "post",
  path: "/v1/sessions/{sessionId}/turns/{turnId}/cancel",
  operationId: "cancelTurn",
  tags: ["Sessions"],
  summary: "Cancel a turn",
  description:
    "Cancels a running turn, or one awaiting client tool results, on whichever instance runs it; nothing of it " +
    "stays. A queued turn is cancelled too, and never runs. A turn that has ended is answered as it is.",
  security: OWNER_ONLY,
  request: { params: TURN_PARAMS },
  responses: {
    200: success("TurnSummary", "The turn's summary.", { ...TURN, status: "cancelled" }),
    ...FAILURES,
  },
});

const rewindSession = createRoute({
  method: "post",
  path: "/v1/sessions/{sessionId}/rewind",
  operationId: "rewindSession",
  tags: ["Sessions"],
  summary: "Rewind a session before a turn",
  description:
    "Takes the conversation back to where the turn `beforeTurnId` began: that turn and every later one are kept " +
    "and shown `superseded`, the model no longer sees them (nor a compaction made since), and the next user turn " +
    "continues from there. An edit of an earlier message is a rewind before its turn, then a new user turn. " +
    "Sent again, it changes nothing. 409 SESSION_BUSY while a turn is open.",
  security: OWNER_ONLY,
  request: { params: SESSION_PARAMS, body: jsonBody("SessionRewindRequest", { beforeTurnId: "t-1" }) },
  responses: {
    200: success("SessionSummary", "The session's summary, as rewound.", {
      sessionId: "s-42",
      conversationContextId: "default",
      mode: "general",
      modeDisplayName: "General",
      modeHistory: [],
      turns: [{ ...TURN, status: "superseded" }],
      contextTokens: 0,
      contextWindowTokens: 400_000,
      compactions: [],
      createdAt: CREATED_AT,
      updatedAt: UPDATED_AT,
    }),
    ...FAILURES,
  },
});

const forkSession = createRoute({
  method: "post",
  path: "/v1/sessions/{sessionId}/fork",
  operationId: "forkSession",
  tags: ["Sessions"],
  summary: "Fork a session",
  description:
    "Makes the caller's session `newSessionId` whose conversation is this one's up to (not including) " +
    "`atTurnId`, all of it when absent, in the mode it had there. The fork shares nothing the provider stores " +
    "with its source: its first turn replays the copied conversation, so deleting either never breaks the " +
    "other. Sent again, the fork's summary; a `newSessionId` naming another session is 400 VALIDATION_FAILED; " +
    "409 SESSION_BUSY while the source has a turn open.",
  security: OWNER_ONLY,
  request: {
    params: SESSION_PARAMS,
    body: jsonBody("SessionForkRequest", { newSessionId: "s-43", atTurnId: "t-3" }),
  },
  responses: {
    201: success("SessionSummary", "The fork's summary.", {
      sessionId: "s-43",
      conversationContextId: "default",
      mode: "general",
      modeDisplayName: "General",
      modeHistory: [],
      turns: [TURN],
      contextTokens: null,
      contextWindowTokens: 400_000,
      compactions: [],
      forkedFrom: { sessionId: "s-42", turnId: "t-3" },
      createdAt: CREATED_AT,
      updatedAt: UPDATED_AT,
    }),
    ...FAILURES,
  },
});

const deleteSession = createRoute({
  method: "delete",
  path: "/v1/sessions/{sessionId}",
  operationId: "deleteSession",
  tags: ["Sessions"],
  summary: "Delete a session",
  description:
    "Deletes the session and everything of it: turns, events, traces and files. 409 SESSION_BUSY while a turn runs.",
  security: OWNER_ONLY,
  request: { params: SESSION_PARAMS },
  responses: { 200: success("SessionDeleted", "Deleted.", { deleted: true }), ...FAILURES },
});

const compactSession = createRoute({
  method: "post",
  path: "/v1/sessions/{sessionId}/compact",
  operationId: "compactSession",
  tags: ["Sessions"],
  summary: "Compact a session's conversation",
  description:
    "Summarises the conversation now and restarts the provider's chain from the summary and the recent turns " +
    "that fit, as happens on its own near the model's context window. `compacted: false`, no model called, " +
    "when no turn came since the latest compaction; 409 SESSION_BUSY while a turn is open; 429 BUDGET_EXCEEDED " +
    "past a budget of the caller, no model called.",
  security: OWNER_ONLY,
  request: { params: SESSION_PARAMS },
  responses: {
    200: success("SessionCompacted", "Compacted, or nothing to compact.", {
      compacted: true,
      tokensBefore: 98_000,
      tokensAfter: 12_500,
    }),
    ...FAILURES,
  },
});

const getSession = createRoute({
  method: "get",
  path: "/v1/sessions/{sessionId}",
  operationId: "getSession",
  tags: ["Sessions"],
  summary: "Get a session",
  description: "The session's mode, the history of its mode changes, and its turns with their status.",
  security: OWNER_ONLY,
  request: { params: SESSION_PARAMS },
  responses: {
    200: success("SessionSummary", "The session's summary.", {
      sessionId: "s-42",
      conversationContextId: "default",
      mode: "general",
      modeDisplayName: "General",
      modeHistory: [],
      turns: [TURN],
      contextTokens: 18_200,
      contextWindowTokens: 400_000,
      compactions: [],
      createdAt: CREATED_AT,
      updatedAt: UPDATED_AT,
    }),
    ...FAILURES,
  },
});

const getTrace = createRoute({
  method: "get",
  path: "/v1/sessions/{sessionId}/turns/{turnId}/trace",
  operationId: "getTurnTrace",
  tags: ["Sessions"],
  summary: "Get a turn's trace",
  description:
    "Diagnostics of one turn, out of band: each round's request and answer, the requests composed for the " +
    "provider and its raw responses, tool executions and timings. The one place provider ids appear.",
  security: OWNER_ONLY,
  request: { params: TURN_PARAMS },
  responses: {
    200: success("TurnTrace", "The trace.", {
      ...TURN,
      rounds: [
        {
          request: { sessionId: "s-42", turnId: "t-1", instruction: "Does the build pass?" },
          requestHash: "sha256:9b1d6e0f4a3c2b8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d",
          result: {
            successful: true,
            result: {
              kind: "final",
              sessionId: "s-42",
              turnId: "t-1",
              modeDisplayName: "General",
              primaryOutputText: "The build passes.",
            },
            errors: [],
            warnings: [],
          },
        },
      ],
      llmCalls: [
        {
          index: 0,
          request: { model: "gpt-5-mini" },
          response: { text: "The build passes." },
          providerRequest: { model: "gpt-5-mini" },
          providerResponse: { id: "resp_0123" },
          error: null,
          startedAt: CREATED_AT,
          durationMs: 1420,
        },
      ],
      toolExecutions: [],
      costUsd: 0.00042,
    }),
    ...FAILURES,
  },
});

const followEvents = createRoute({
  method: "get",
  path: "/v1/sessions/{sessionId}/turns/{turnId}/events",
  operationId: "followTurnEvents",
  tags: ["Sessions"],
  summary: "Resume a turn's event stream",
  description:
    "The turn's events again after Last-Event-ID, then live until the turn ends; following a turn never " +
    "cancels it. Event ids are `<round>-<n>` for text deltas and `<round>-result` for a round's result (round 0 " +
    "is the user turn, then one round per tool continuation). A resume always ends with the turn's latest " +
    "`result` event: after that result itself (Last-Event-ID `<last round>-result`), it is sent again, as the " +
    "authoritative end. An id that names no event of the turn (not of this form, a round the turn does not " +
    "have, or the result of a round still running) is 400 VALIDATION_FAILED naming `Last-Event-ID`. A text " +
    "delta's id is judged by its round: the deltas of a turn that ended are pruned after a while.",
  security: OWNER_ONLY,
  request: { params: TURN_PARAMS },
  parameters: [
    {
      name: "Last-Event-ID",
      in: "header",
      required: false,
      description: "The id of the last event received; absent to start from the first.",
      schema: { type: "string" },
      example: "0-1",
    },
    {
      name: "lastEventId",
      in: "query",
      required: false,
      description: "Last-Event-ID for clients that cannot set headers (EventSource polyfills).",
      schema: { type: "string" },
      example: "0-1",
    },
  ],
  responses: {
    200: { description: "The turn's events.", content: { "text/event-stream": EVENT_STREAM } },
    ...FAILURES,
  },
});

const FILE_HASH = "sha256:4d7a2c9e1b3f5a6d8c0e2f4a6b8d0c2e4f6a8b0d2c4e6f8a0b2d4c6e8f0a2b4c";

const getFile = createRoute({
  method: "get",
  path: "/v1/files/{fileId}",
  operationId: "getFile",
  tags: ["Files"],
  summary: "Download a file",
  description:
    "The content behind a FileRef's url, as an attachment with the file's MIME type. 410 FILE_EXPIRED once its " +
    "`contentExpires` has passed.",
  security: OWNER_ONLY,
  request: { params: FILE_PARAMS },
  responses: {
    200: {
      description: "The file's bytes.",
      headers: {
        ETag: {
          description: "The file's content hash.",
          schema: { type: "string" },
          example: `"${FILE_HASH}"`,
        },
        "Content-Disposition": {
          description: "`attachment`, with `filename` (ASCII) and `filename*` for a name that is not ASCII.",
          schema: { type: "string" },
          example: 'attachment; filename="report.md"',
        },
        "X-Content-Type-Options": { schema: { type: "string", const: "nosniff" } },
      },
      content: {
        "*/*": {
          schema: { type: "string", contentMediaType: "application/octet-stream" },
          example: "# Report\n",
        },
      },
    },
    304: {
      description: "Not modified: `If-None-Match` names the file's ETag (its content never changes).",
      headers: { ETag: { description: "The file's content hash.", schema: { type: "string" } } },
    },
    ...FAILURES,
  },
});

/** A turn's ids, in the order the service takes them. */
const turnIds = ({ sessionId, turnId }: { sessionId: string; turnId: string }) =>
  [sessionId, turnId] as const;

/** Owner-only reads: another principal's ids answer exactly as unknown ids do (docs/architecture.md). */
export function sessionRoutes(app: OpenAPIHono<AppEnv>, service: AgentService, heartbeatMs: number): void {
  // The catalog is the operator's, the same for every principal.
  app.openapi(listModes, (c) => sendResult(c, ok(service.listModes())));
  app.openapi(listSessions, async (c) => {
    const query = validateSessionListQuery(c.req.query());
    if (!query.successful) return sendResult(c, query);
    return sendResult(c, await service.listSessions(c.get("principal"), query.result));
  });
  app.openapi(listMessages, async (c) => {
    const query = validateSessionMessagesQuery(c.req.query());
    if (!query.successful) return sendResult(c, query);
    return sendResult(
      c,
      await service.listMessages(c.get("principal"), c.req.valid("param").sessionId, {
        ...query.result,
        includeSuperseded: query.result.include === "superseded",
      }),
    );
  });
  app.openapi(getTurn, async (c) =>
    sendResult(c, await service.getTurnState(c.get("principal"), ...turnIds(c.req.valid("param")))),
  );
  app.openapi(cancelTurn, async (c) =>
    sendResult(c, await service.cancelTurn(c.get("principal"), ...turnIds(c.req.valid("param")))),
  );
  app.openapi(rewindSession, async (c) => {
    const body = readJsonBody(c);
    const request = body.successful ? validateSessionRewindRequest(body.result) : body;
    if (!request.successful) return sendResult(c, request);
    const { sessionId } = c.req.valid("param");
    return sendResult(
      c,
      await service.rewindSession(c.get("principal"), sessionId, request.result.beforeTurnId),
    );
  });
  app.openapi(forkSession, async (c) => {
    const body = readJsonBody(c);
    const request = body.successful ? validateSessionForkRequest(body.result) : body;
    if (!request.successful) return sendResult(c, request);
    const { sessionId } = c.req.valid("param");
    const forked = await service.forkSession(c.get("principal"), sessionId, request.result);
    return forked.successful ? c.json(forked, 201) : sendResult(c, forked);
  });
  app.openapi(deleteSession, async (c) =>
    sendResult(c, await service.deleteSession(c.get("principal"), c.req.valid("param").sessionId)),
  );
  app.openapi(compactSession, async (c) =>
    sendResult(c, await service.compactSession(c.get("principal"), c.req.valid("param").sessionId)),
  );
  app.openapi(getSession, async (c) =>
    sendResult(c, await service.getSession(c.get("principal"), c.req.valid("param").sessionId)),
  );
  app.openapi(getTrace, async (c) =>
    sendResult(c, await service.getTurnTrace(c.get("principal"), ...turnIds(c.req.valid("param")))),
  );
  followEventsRoute(app, service, heartbeatMs);
  fileRoute(app, service);
}

/** A turn's events again, for a client that dropped off its stream, under the followers' slots. */
function followEventsRoute(app: OpenAPIHono<AppEnv>, service: AgentService, heartbeatMs: number): void {
  const followers = new FollowerSlots();
  // A client that dropped off a stream resumes here from Last-Event-ID (the query form serves EventSource polyfills).
  app.openapi(followEvents, async (c) => {
    const lastEventId = c.req.header("last-event-id") ?? c.req.query("lastEventId");
    const ids = [c.get("principal"), ...turnIds(c.req.valid("param"))] as const;
    const slot = followers.take(ids[0], JSON.stringify(ids));
    if ("full" in slot) return sendResult(c, followersFull(slot.full));
    const { release } = slot;
    // Following costs polls: it stops once nobody listens (the turn itself goes on regardless).
    const left = new AbortController();
    const followed = await service.followTurn(...ids, lastEventId, left.signal).catch((error: unknown) => {
      release();
      throw error;
    });
    if (!followed.successful) {
      release();
      return sendResult(c, followed);
    }
    return sendEventStream(c, heartbeatMs, async function* (signal) {
      // The slot frees as the client leaves, not once the follower's next poll has noticed.
      signal.addEventListener(
        "abort",
        () => {
          left.abort();
          release();
        },
        { once: true },
      );
      try {
        yield* followed.result;
      } finally {
        release();
      }
    });
  });
}

/** A kept file's bytes, cached by its content hash. */
function fileRoute(app: OpenAPIHono<AppEnv>, service: AgentService): void {
  app.openapi(getFile, async (c) => {
    const found = await service.getFile(c.get("principal"), c.req.valid("param").fileId);
    if (!found.successful) return sendResult(c, found);
    const { file, content } = found.result;
    const etag = `"${file.contentHash}"`;
    const headers = { etag, "cache-control": "private, max-age=0" };
    // The content never changes under an id: a client holding these bytes need not fetch them again.
    if (matchesEtag(c.req.header("if-none-match"), etag)) return c.body(null, 304, headers);
    return c.body(new Uint8Array(content), 200, {
      ...headers,
      // Files kept before media types were checked may hold one that is no valid header value.
      "content-type": isMediaType(file.mimeType) ? file.mimeType : OPAQUE_MEDIA_TYPE,
      "content-length": String(file.sizeBytes),
      // A model's file is never rendered as the service's own page: saved, and its type taken as given.
      "content-disposition": contentDisposition(file.name),
      "x-content-type-options": "nosniff",
    });
  });
}

/** `If-None-Match` (RFC 9110 §13.1.2): `*` or a list of tags, weak ones compared weakly. */
function matchesEtag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(",").some((tag) => {
    const trimmed = tag.trim();
    return trimmed === "*" || trimmed.replace(/^W\//, "") === etag;
  });
}
