import { randomUUID } from "node:crypto";
import {
  type AgentExecuteRequest,
  type InvokeResult,
  isToolContinuationRequest,
  ok,
  SESSION_PAGE_LIMITS,
  type SessionMessage,
  type ToolCall,
  type TurnEvent,
} from "@aptix/contracts";
import type { AgentService } from "@aptix/core";
import { createRoute, type OpenAPIHono, type RouteConfig, z } from "@hono/zod-openapi";
import type { UIMessage, UIMessageChunk } from "ai";
import type { Context } from "hono";
import type { AppEnv } from "../app-env.js";
import { type ChatRequest, chatFieldError, readChatRequest, toolResultsOf } from "../chat/chat-request.js";
import { sessionUiMessages } from "../chat/session-ui-messages.js";
import { type TurnFacts, TurnUiChunks } from "../chat/turn-ui-chunks.js";
import { readJsonBody } from "../json-body.js";
import { FAILURES, OWNER_ONLY, success } from "../openapi/responses.js";
import { reportFault } from "../report-fault.js";
import { sendResult } from "../send-result.js";
import { FollowerSlots } from "./follower-slots.js";
import { followersFull } from "./followers-full.js";

export interface ChatRoutesOptions {
  service: AgentService;
  validate: (input: unknown) => InvokeResult<AgentExecuteRequest>;
  heartbeatMs: number;
}

const CHAT_PARAMS = z.object({
  id: z.string().openapi({ description: "The chat's id: the session's id.", example: "s-42" }),
});

const UI_STREAM = {
  schema: {
    type: "string" as const,
    description:
      "The AI SDK's UI message stream (`x-vercel-ai-ui-message-stream: v1`): `data: <part>` events, each a JSON " +
      "UI message chunk, then `data: [DONE]`. See docs/web-apps.md for the parts and how Aptix's answers map to them.",
  },
  example: [
    'data: {"type":"start","messageId":"t-1:a"}',
    'data: {"type":"start-step"}',
    'data: {"type":"text-start","id":"t-1:t0"}',
    'data: {"type":"text-delta","id":"t-1:t0","delta":"The build passes."}',
    'data: {"type":"text-end","id":"t-1:t0"}',
    'data: {"type":"finish-step"}',
    'data: {"type":"finish","finishReason":"stop","messageMetadata":{"sessionId":"s-42","turnId":"t-1","modeDisplayName":"General","costUsd":0.00042}}',
    "data: [DONE]",
    "",
    "",
  ].join("\n\n"),
};

const postChat = createRoute({
  method: "post",
  path: "/v1/chat",
  operationId: "postChat",
  tags: ["Turns"],
  summary: "Run a turn for the AI SDK's useChat",
  description:
    "The body `DefaultChatTransport` posts (`id`, `messages`, `trigger`, `messageId`, and the transport's " +
    "`body`): `id` is the session, the last message the request. A user message is a user turn (its id the " +
    "turn's); the assistant message of the turn awaiting tools (`<turnId>:a`), sent again after `addToolOutput` " +
    "or `addToolApprovalResponse`, is its continuation. Extra fields may be `conversationContextId`, " +
    "`agentContextId`, `workspaceId`, `ragScope`, `repo`, `language`. `regenerate-message` answers the " +
    "session's last turn again as a new turn (the old one kept, superseded); a user message sent with " +
    "`messageId` (an edit) rewinds the session before that message's turn and runs as a new turn. The answer " +
    "is the UI message stream.",
  security: OWNER_ONLY,
  request: {
    body: {
      required: true,
      content: {
        "application/json": {
          schema: { type: "object" },
          example: {
            id: "s-42",
            trigger: "submit-message",
            messages: [{ id: "t-1", role: "user", parts: [{ type: "text", text: "Does the build pass?" }] }],
          },
        },
      },
    },
  },
  responses: {
    200: { description: "The turn's UI message stream.", content: { "text/event-stream": UI_STREAM } },
    ...FAILURES,
  },
});

const resumeChat = createRoute({
  method: "get",
  path: "/v1/chat/{id}/stream",
  operationId: "resumeChatStream",
  tags: ["Sessions"],
  summary: "Resume a chat's stream (useChat `resume: true`)",
  description:
    "The running turn's UI message stream from its start, then live until it ends; 204 when the session has no " +
    "running turn (or is unknown). Following a turn never cancels it.",
  security: OWNER_ONLY,
  request: { params: CHAT_PARAMS },
  responses: {
    200: {
      description: "The running turn's UI message stream.",
      content: { "text/event-stream": UI_STREAM },
    },
    204: { description: "No turn runs: nothing to resume." },
    ...FAILURES,
  },
});

const stopChat = createRoute({
  method: "post",
  path: "/v1/chat/{id}/stop",
  operationId: "stopChat",
  tags: ["Sessions"],
  summary: "Stop a chat's turn",
  description:
    "Cancels the session's running turn, or the one awaiting tools; its stream ends with `abort`. Answers the " +
    "turn's summary; 204 when no turn is open.",
  security: OWNER_ONLY,
  request: { params: CHAT_PARAMS },
  responses: {
    200: success("TurnSummary", "The cancelled turn's summary.", {
      turnId: "t-1",
      sequence: 1,
      status: "cancelled",
      mode: "general",
      usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      error: {
        code: "TURN_CANCELLED",
        message: "The turn was cancelled before it finished; nothing of it was kept.",
      },
      createdAt: "2026-03-02T09:15:00.000Z",
      completedAt: "2026-03-02T09:15:02.000Z",
    }),
    204: { description: "No turn is open: nothing to stop." },
    ...FAILURES,
  },
});

const chatMessages = createRoute({
  method: "get",
  path: "/v1/chat/{id}/messages",
  operationId: "listChatMessages",
  tags: ["Sessions"],
  summary: "A chat's messages as UIMessage[]",
  description:
    "The session's conversation as the AI SDK's `UIMessage[]`, the initial `messages` of `useChat`: a user " +
    "message per turn (id: the turn's) and its assistant message (`<turnId>:a`). A plain JSON array, not an " +
    "InvokeResult; `[]` for a session that does not exist yet.",
  security: OWNER_ONLY,
  request: { params: CHAT_PARAMS },
  responses: {
    // Described as plain JSON Schema: the document's components describe the service's own bodies only.
    200: {
      description: "The messages, oldest first.",
      content: {
        "application/json": {
          schema: { type: "array", items: { type: "object" } },
          example: [
            { id: "t-1", role: "user", parts: [{ type: "text", text: "Does the build pass?" }] },
            {
              id: "t-1:a",
              role: "assistant",
              metadata: { sessionId: "s-42", turnId: "t-1" },
              parts: [{ type: "step-start" }, { type: "text", text: "The build passes.", state: "done" }],
            },
          ],
        },
      },
    } as RouteConfig["responses"][string],
    ...FAILURES,
  },
});

/**
 * The AI SDK's UI message stream over the service's own operations (docs/web-apps.md): `useChat` with
 * `DefaultChatTransport` and `api` pointed at `/v1/chat` runs turns, continues them with tool outputs and
 * approvals, resumes and stops them, and loads a session's messages. Only this module and `../chat/` know the
 * AI SDK.
 */
export function chatRoutes(app: OpenAPIHono<AppEnv>, options: ChatRoutesOptions): void {
  const { service, heartbeatMs } = options;
  const followers = new FollowerSlots();

  app.openapi(postChat, async (c) => {
    const body = readJsonBody(c);
    if (!body.successful) return sendResult(c, body);
    const chat = readChatRequest(body.result);
    if (!chat.successful) return sendResult(c, chat);
    const principal = c.get("principal");
    const request = await executeRequest(service, options.validate, principal, chat.result);
    if (!request.successful) return sendResult(c, request);
    const { execute, awaited } = request.result;
    const events = await service.stream(execute, principal);
    if (!events.successful) return sendResult(c, events);
    const chunks = new TurnUiChunks(execute.turnId);
    const opening = [
      ...chunks.start(),
      ...(isToolContinuationRequest(execute) ? chunks.answers(execute, awaited) : []),
    ];
    return uiStream(c, { service, chunks, opening, heartbeatMs, events: () => events.result });
  });
  app.openapi(resumeChat, (c) =>
    resume(c, { service, followers, heartbeatMs, sessionId: c.req.valid("param").id }),
  );
  app.openapi(stopChat, async (c) => {
    const principal = c.get("principal");
    const sessionId = c.req.valid("param").id;
    const session = await service.getSession(principal, sessionId);
    if (!session.successful) return sendResult(c, session);
    const open = session.result.turns.find(({ status }) => OPEN_STATUSES.includes(status));
    if (open === undefined) return c.body(null, 204);
    return sendResult(c, await service.cancelTurn(principal, sessionId, open.turnId));
  });
  app.openapi(chatMessages, async (c) => {
    const messages = await uiMessagesOf(service, c.get("principal"), c.req.valid("param").id);
    return messages.successful ? c.json(messages.result, 200) : sendResult(c, messages);
  });
}

/** The statuses of a turn that has not ended: one a stop cancels. */
const OPEN_STATUSES: readonly string[] = ["running", "awaiting_client_tools"];

/** `GET /v1/chat/:id/stream`: the running turn's stream from its start, or 204 when no turn runs. */
async function resume(
  c: Context<AppEnv>,
  input: { service: AgentService; followers: FollowerSlots; heartbeatMs: number; sessionId: string },
): Promise<Response> {
  const { service, sessionId } = input;
  const principal = c.get("principal");
  const session = await service.getSession(principal, sessionId);
  const running = session.successful
    ? session.result.turns.find(({ status }) => status === "running")?.turnId
    : undefined;
  if (running === undefined) return c.body(null, 204);
  const slot = input.followers.take(principal, JSON.stringify([principal, sessionId, running]));
  if ("full" in slot) return sendResult(c, followersFull(slot.full));
  // Following costs polls: it stops once nobody listens (the turn itself goes on regardless).
  const left = new AbortController();
  const release = () => {
    left.abort();
    slot.release();
  };
  try {
    const trace = await service.getTurnTrace(principal, sessionId, running);
    const followed = await service.followTurn(principal, sessionId, running, undefined, left.signal);
    if (!trace.successful || !followed.successful) {
      release();
      return c.body(null, 204);
    }
    // The turn's earlier rounds come with the user's answers to them: the replay is the whole message.
    const chunks = new TurnUiChunks(running, trace.result.rounds);
    const { heartbeatMs } = input;
    return await uiStream(c, {
      service,
      chunks,
      opening: chunks.start(),
      heartbeatMs,
      events: () => followed.result,
      release,
    });
  } catch (error) {
    release();
    throw error;
  }
}

/** The session's messages as UIMessage[]: none for a session that does not exist (yet). */
async function uiMessagesOf(
  service: AgentService,
  principal: string,
  sessionId: string,
): Promise<InvokeResult<UIMessage[]>> {
  const session = await service.getSession(principal, sessionId);
  if (!session.successful) return session.errors[0].code === "SESSION_NOT_FOUND" ? ok([]) : session;
  const messages: SessionMessage[] = [];
  let cursor: string | undefined;
  do {
    const page = await service.listMessages(principal, sessionId, {
      limit: SESSION_PAGE_LIMITS.max,
      ...(cursor === undefined ? {} : { cursor }),
    });
    if (!page.successful) return page;
    messages.push(...page.result.messages);
    cursor = page.result.nextCursor;
  } while (cursor !== undefined);
  const last = session.result.turns.at(-1);
  if (last?.status !== "running" && last?.status !== "awaiting_client_tools") {
    return ok(await sessionUiMessages({ sessionId, messages }));
  }
  // The open turn's calls need their ids (the UI answers them by id): its trace has them.
  const trace = await service.getTurnTrace(principal, sessionId, last.turnId);
  if (!trace.successful) return trace;
  const open = { turnId: last.turnId, status: last.status, rounds: trace.result.rounds };
  return ok(await sessionUiMessages({ sessionId, messages, open }));
}

/**
 * The service's request for a chat request: a user turn as it is, a continuation with the answers of the calls
 * the turn awaits (read from its trace). A continuation of a turn that awaits nothing is refused, naming the
 * message.
 */
/** A turn id of the service's own, for a turn the UI's message ids cannot name (an edit, a regenerate). */
const newTurnId = () => `t-${randomUUID()}`;

/** The session's last turn answered again (`regenerate-message`), as a new turn. */
async function regeneration(
  service: AgentService,
  principal: string,
  sessionId: string,
): Promise<InvokeResult<{ execute: AgentExecuteRequest; awaited: readonly ToolCall[] }>> {
  const session = await service.getSession(principal, sessionId);
  if (!session.successful) return session;
  const last = session.result.turns.at(-1);
  if (last === undefined)
    return chatFieldError("trigger", "regenerates the last turn, and the chat has none");
  const again = { newTurnId: newTurnId(), stream: true };
  const execute = await service.regeneration(principal, sessionId, last.turnId, again);
  return execute.successful ? { ...execute, result: { execute: execute.result, awaited: [] } } : execute;
}

async function executeRequest(
  service: AgentService,
  validate: (input: unknown) => InvokeResult<AgentExecuteRequest>,
  principal: string,
  chat: ChatRequest,
): Promise<InvokeResult<{ execute: AgentExecuteRequest; awaited: readonly ToolCall[] }>> {
  if (chat.type === "regenerate") return regeneration(service, principal, chat.sessionId);
  if (chat.type === "user_turn") {
    if (chat.edits !== undefined) {
      const rewound = await service.rewindSession(principal, chat.sessionId, chat.edits);
      if (!rewound.successful) return rewound;
    }
    // The edited message keeps its id in the UI; its turn, superseded, keeps it in the session.
    const execute = validate(chat.edits === undefined ? chat.body : { ...chat.body, turnId: newTurnId() });
    return execute.successful ? { ...execute, result: { execute: execute.result, awaited: [] } } : execute;
  }
  const { sessionId, turnId } = chat;
  const trace = await service.getTurnTrace(principal, sessionId, turnId);
  const answer = trace.successful ? trace.result.rounds.at(-1)?.result : undefined;
  const awaited =
    trace.successful &&
    trace.result.status === "awaiting_client_tools" &&
    answer?.successful &&
    answer.result.kind === "client_tool_continuation"
      ? answer.result.toolCalls
      : undefined;
  if (awaited === undefined) {
    return chatFieldError(
      `messages[${chat.index}]`,
      `answers turn ${JSON.stringify(turnId)}, which awaits no tool output`,
    );
  }
  const toolResults = toolResultsOf(chat, awaited);
  if (!toolResults.successful) return toolResults;
  const execute = validate({ sessionId, turnId, toolResults: toolResults.result });
  return execute.successful ? { ...execute, result: { execute: execute.result, awaited } } : execute;
}

interface UiStreamOptions {
  service: AgentService;
  chunks: TurnUiChunks;
  /** The parts before the turn's events: the message's start, the user's answers a continuation carries. */
  opening: UIMessageChunk[];
  heartbeatMs: number;
  events: () => AsyncIterable<TurnEvent>;
  /** Called once the stream ends or its client leaves. */
  release?: () => void;
}

/**
 * Answers the UI message stream of `events`, each event's parts taken once the client has read the last ones: a
 * client that does not read stops the taking, one that leaves ends it (the turn goes on and is stored).
 */
async function uiStream(c: Context<AppEnv>, options: UiStreamOptions): Promise<Response> {
  const { service, chunks, heartbeatMs } = options;
  const principal = c.get("principal");
  const iterator = options.events()[Symbol.asyncIterator]();
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    options.release?.();
  };
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of options.opening) controller.enqueue(chunk);
    },
    async pull(controller) {
      try {
        const next = await iterator.next();
        if (next.done) {
          release();
          controller.close();
          return;
        }
        const event = next.value;
        const facts = event.event === "result" ? await turnFactsOf(service, principal, event) : {};
        for (const chunk of chunks.event(event, facts)) controller.enqueue(chunk);
      } catch (error) {
        reportFault(c, error, "chat stream failed");
        for (const chunk of chunks.broken()) controller.enqueue(chunk);
        release();
        controller.close();
      }
    },
    async cancel() {
      release();
      await iterator.return?.();
    },
  });
  // Loaded by the first chat: a service no web app talks to does not hold the AI SDK in memory.
  const { createUIMessageStreamResponse } = await import("ai");
  return createUIMessageStreamResponse({ stream, keepAliveMs: heartbeatMs });
}

/**
 * What a final answer's parts need from its turn's trace: the arguments of the server tools it ran (the answer
 * names their outputs only), and the turn's cost for the message's metadata.
 */
async function turnFactsOf(
  service: AgentService,
  principal: string,
  event: Extract<TurnEvent, { event: "result" }>,
): Promise<TurnFacts> {
  const answer = event.data.successful ? event.data.result : undefined;
  if (answer?.kind !== "final") return {};
  const trace = await service.getTurnTrace(principal, answer.sessionId, answer.turnId);
  return trace.successful ? { serverCalls: trace.result.toolExecutions, costUsd: trace.result.costUsd } : {};
}
