import {
  type AgentExecuteRequest,
  type FinalResponse,
  isToolContinuationRequest,
  type ToolCall,
  type ToolContinuationRequest,
  type TurnEvent,
} from "@aptix/contracts";
import type { UIMessageChunk } from "ai";
import { jsonValue } from "./json-value.js";

/** The name the service gives the client call that asks the user to approve a server tool's call. */
export const APPROVAL_TOOL_NAME = "aptix_approve";

/** What an approval call's `argumentsJson` holds: the server tool's name and its call's own arguments. */
interface ApprovalArguments {
  tool: string;
  argumentsJson: string;
}

/** A server tool's call as the turn's trace keeps it: where the UI gets the input of a server tool it shows. */
export interface ServerToolCall {
  toolCallId: string;
  argumentsJson: string;
}

/** What a round's result needs from the turn's trace besides its event. */
export interface TurnFacts {
  /** The server tools its final answer ran: the answer names their outputs only. */
  serverCalls?: readonly ServerToolCall[];
  /** What the turn cost by the price table; null when a model is unpriced. */
  costUsd?: number | null;
}

/** The assistant message of a turn: one per turn, whatever the rounds and resumes. */
export const assistantMessageId = (turnId: string) => `${turnId}:a`;

/** The server tool an approval call stands for, or undefined when `call` is none. */
function approvalOf(call: ToolCall): ApprovalArguments | undefined {
  if (call.name !== APPROVAL_TOOL_NAME) return undefined;
  const value = jsonValue(call.argumentsJson) as Partial<ApprovalArguments> | null;
  return typeof value?.tool === "string" && typeof value.argumentsJson === "string"
    ? { tool: value.tool, argumentsJson: value.argumentsJson }
    : undefined;
}

/**
 * The turn's events as the parts of the AI SDK's UI message stream, one assistant message per turn
 * (`<turnId>:a`). A text reset (the text of an intermediate LLM call) closes a step, and that call's text stays
 * its own text part; a round's result closes the message: client tool calls as `tool-input-available` (and an
 * approval call as its server tool's call with `tool-approval-request`), then `finish`; a final answer as its
 * server tools' parts (`providerExecuted`), files and warnings, then `finish`; a failure as `error`, a cancel as
 * `abort`. It holds the state of one stream: make one per response.
 *
 * A turn replayed from its start (`rounds`, its requests as the trace keeps them) goes on past a round that
 * asked for tools: the user's answers (the next round's request) follow its calls, and the message goes on.
 */
export class TurnUiChunks {
  readonly #turnId: string;
  readonly #rounds: ReadonlyArray<{ request: AgentExecuteRequest }>;
  #stepOpen = false;
  #textId: string | undefined;
  #texts = 0;
  /** The tool calls this stream has shown, by id: a server tool's output needs its part first. */
  readonly #shown = new Set<string>();

  constructor(turnId: string, rounds: ReadonlyArray<{ request: AgentExecuteRequest }> = []) {
    this.#turnId = turnId;
    this.#rounds = rounds;
  }

  start(): UIMessageChunk[] {
    return [{ type: "start", messageId: assistantMessageId(this.#turnId) }];
  }

  /**
   * What the user answered to the calls `awaited` (a round's `client_tool_continuation`), as the UI shows it:
   * a client tool's output or error, an approval given or declined (a declined call never runs, so it ends
   * there).
   */
  answers(request: ToolContinuationRequest, awaited: readonly ToolCall[]): UIMessageChunk[] {
    const chunks: UIMessageChunk[] = [];
    for (const result of request.toolResults) {
      const call = awaited.find(({ toolCallId }) => toolCallId === result.toolCallId);
      if (call === undefined) continue;
      const { toolCallId } = result;
      // The UI has its part: an output the final answer brings updates it.
      this.#shown.add(toolCallId);
      if (approvalOf(call) !== undefined) {
        const answer = result.resultJson === undefined ? undefined : jsonValue(result.resultJson);
        const { approved, message } = (answer ?? {}) as { approved?: unknown; message?: unknown };
        chunks.push({
          type: "tool-approval-response",
          approvalId: toolCallId,
          approved: approved === true,
          ...(typeof message === "string" ? { reason: message } : {}),
        });
        if (approved !== true) chunks.push({ type: "tool-output-denied", toolCallId });
      } else if (result.resultJson !== undefined) {
        chunks.push({ type: "tool-output-available", toolCallId, output: jsonValue(result.resultJson) });
      } else {
        chunks.push({ type: "tool-output-error", toolCallId, errorText: result.errorMessage ?? "" });
      }
    }
    return chunks;
  }

  /** The parts of one event; a result's with what the turn's trace adds to it (`facts`). */
  event(event: TurnEvent, facts: TurnFacts = {}): UIMessageChunk[] {
    switch (event.event) {
      case "output_text.delta":
        return [...this.#openText(), { type: "text-delta", id: this.#textId ?? "", delta: event.data.delta }];
      case "output_text.reset":
        return this.#closeStep();
      case "context.compacted":
        return [{ type: "data-aptix-compaction", data: event.data }];
      case "result":
        return this.#result(event.data, facts, Number.parseInt(event.id, 10));
    }
  }

  /** The end of a stream that broke before its result: the client learns it failed, and nothing more. */
  broken(): UIMessageChunk[] {
    return [
      ...this.#closeStep(),
      {
        type: "error",
        errorText: "INTERNAL: The stream failed unexpectedly; the request id identifies it in the logs.",
      },
      { type: "finish", finishReason: "error" },
    ];
  }

  #openStep(): UIMessageChunk[] {
    if (this.#stepOpen) return [];
    this.#stepOpen = true;
    return [{ type: "start-step" }];
  }

  #openText(): UIMessageChunk[] {
    if (this.#textId !== undefined) return [];
    this.#textId = `${this.#turnId}:t${this.#texts++}`;
    return [...this.#openStep(), { type: "text-start", id: this.#textId }];
  }

  #closeStep(): UIMessageChunk[] {
    const chunks: UIMessageChunk[] = [];
    if (this.#textId !== undefined) chunks.push({ type: "text-end", id: this.#textId });
    this.#textId = undefined;
    if (this.#stepOpen) chunks.push({ type: "finish-step" });
    this.#stepOpen = false;
    return chunks;
  }

  #result(
    result: Extract<TurnEvent, { event: "result" }>["data"],
    { serverCalls = [], costUsd }: TurnFacts,
    round: number,
  ): UIMessageChunk[] {
    const textEnd: UIMessageChunk[] =
      this.#textId === undefined ? [] : [{ type: "text-end", id: this.#textId }];
    this.#textId = undefined;
    if (!result.successful) {
      const [error = { code: "INTERNAL", message: "The turn failed." }] = result.errors;
      const stepEnd = this.#closeStep();
      if (error.code === "TURN_CANCELLED") {
        return [...textEnd, ...stepEnd, { type: "abort", reason: error.message }];
      }
      // The code and the message, which say what the user may do; details stay in the logs and the trace.
      return [
        ...textEnd,
        ...stepEnd,
        { type: "error", errorText: `${error.code}: ${error.message}` },
        { type: "finish", finishReason: "error" },
      ];
    }
    const answer = result.result;
    const parts =
      answer.kind === "final" ? this.#finalParts(answer, serverCalls) : this.#clientCalls(answer.toolCalls);
    const warnings = [...(answer.kind === "final" ? (answer.userWarnings ?? []) : []), ...result.warnings];
    const chunks: UIMessageChunk[] = [
      ...textEnd,
      ...(parts.length > 0 ? this.#openStep() : []),
      ...parts,
      ...warnings.map((warning): UIMessageChunk => ({ type: "data-aptix-warning", data: warning })),
      ...this.#closeStep(),
    ];
    const next = this.#rounds[round + 1]?.request;
    if (answer.kind === "client_tool_continuation" && next !== undefined && isToolContinuationRequest(next)) {
      return [...chunks, ...this.answers(next, answer.toolCalls)];
    }
    const { sessionId, turnId, modeDisplayName } = answer;
    const usage = answer.kind === "final" ? answer.usage : undefined;
    chunks.push({
      type: "finish",
      finishReason: answer.kind === "final" ? "stop" : "tool-calls",
      messageMetadata: {
        sessionId,
        turnId,
        modeDisplayName,
        ...(usage === undefined ? {} : { usage }),
        ...(costUsd === undefined ? {} : { costUsd }),
      },
    });
    return chunks;
  }

  #clientCalls(calls: readonly ToolCall[]): UIMessageChunk[] {
    return calls.flatMap((call): UIMessageChunk[] => {
      const { toolCallId } = call;
      this.#shown.add(toolCallId);
      const approval = approvalOf(call);
      if (approval === undefined) {
        return [
          {
            type: "tool-input-available",
            toolCallId,
            toolName: call.name,
            input: jsonValue(call.argumentsJson),
          },
        ];
      }
      // The server runs the tool once approved: its part is the server's, awaiting the user's answer.
      return [
        {
          type: "tool-input-available",
          toolCallId,
          toolName: approval.tool,
          input: jsonValue(approval.argumentsJson),
          providerExecuted: true,
        },
        { type: "tool-approval-request", approvalId: toolCallId, toolCallId },
      ];
    });
  }

  #finalParts(answer: FinalResponse, serverCalls: readonly ServerToolCall[]): UIMessageChunk[] {
    const chunks: UIMessageChunk[] = [];
    for (const result of answer.toolResults ?? []) {
      const { toolCallId } = result;
      if (!this.#shown.has(toolCallId)) {
        const call = serverCalls.find((candidate) => candidate.toolCallId === toolCallId);
        chunks.push({
          type: "tool-input-available",
          toolCallId,
          toolName: result.name,
          input: call === undefined ? {} : jsonValue(call.argumentsJson),
          providerExecuted: true,
        });
        this.#shown.add(toolCallId);
      }
      chunks.push(
        result.resultJson !== undefined
          ? {
              type: "tool-output-available",
              toolCallId,
              output: jsonValue(result.resultJson),
              providerExecuted: true,
            }
          : {
              type: "tool-output-error",
              toolCallId,
              errorText: result.errorMessage ?? "",
              providerExecuted: true,
            },
      );
    }
    for (const file of answer.files ?? [])
      chunks.push({ type: "file", url: file.url, mediaType: file.mimeType });
    return chunks;
  }
}
