import type { AgentExecuteResponse, InvokeResult } from "@aptix/contracts";
import type { LlmCallResult, TurnObserver } from "@aptix/core";
import { type Attributes, type Span, SpanKind, SpanStatusCode, type Tracer, trace } from "@opentelemetry/api";
import { roundOutcome, type ToolRunResult, toolRunOutcome } from "./outcomes.js";

// What the observer port's runs answer: core names them only in the port.
type Retrieval = Awaited<ReturnType<TurnObserver["retrieval"]>>;
type CompactionResult = Awaited<ReturnType<TurnObserver["compaction"]>>;

/**
 * The spans of turns, named and attributed by OpenTelemetry's GenAI semantic conventions: `invoke_agent <mode>`
 * per round, `chat <model>` per LLM call, `execute_tool <name>` per server tool run and `retrieval <workspace>` per
 * turn-time retrieval and `compact` per compaction, each the child of the span active when it starts (the HTTP
 * request's, then the round's); the `describe*` functions below add what each one answered.
 * Attributes name the work and count tokens; the instruction, prompts, completions, tool arguments and results are
 * never among them (`gen_ai.input.messages` and the like are left out on purpose).
 */
export function tracingObserver(tracer: Tracer): TurnObserver {
  return {
    round: (round, run) =>
      inSpan(
        tracer,
        `invoke_agent ${round.mode}`,
        {
          "gen_ai.operation.name": "invoke_agent",
          "gen_ai.agent.name": round.mode,
          "gen_ai.conversation.id": round.sessionId,
          "gen_ai.provider.name": round.provider,
          "gen_ai.request.model": round.model,
          "aptix.turn.id": round.turnId,
          "aptix.turn.round": round.round,
        },
        run,
        describeRound,
      ),
    llmCall: (call, run) =>
      inSpan(
        tracer,
        `chat ${call.model}`,
        {
          "gen_ai.operation.name": "chat",
          "gen_ai.provider.name": call.provider,
          "gen_ai.request.model": call.model,
          "gen_ai.request.stream": call.streaming,
          ...(call.maxOutputTokens === undefined
            ? {}
            : { "gen_ai.request.max_tokens": call.maxOutputTokens }),
        },
        run,
        describeLlmCall,
        SpanKind.CLIENT,
      ),
    toolRun: (tool, run) =>
      inSpan(
        tracer,
        `execute_tool ${tool.name}`,
        {
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": tool.name,
          "gen_ai.tool.call.id": tool.callId,
          "gen_ai.tool.type": "function",
        },
        run,
        describeToolRun,
      ),
    retrieval: (query, run) =>
      inSpan(
        tracer,
        `retrieval ${query.workspaceId}`,
        {
          "gen_ai.operation.name": "retrieval",
          "gen_ai.data_source.id": query.workspaceId,
          "gen_ai.request.top_k": query.limit,
        },
        run,
        describeRetrieval,
      ),
    compaction: (compaction, run) =>
      inSpan(
        tracer,
        "compact",
        {
          "aptix.compaction.reason": compaction.reason,
          "aptix.compaction.tokens_before": compaction.tokensBefore,
          "gen_ai.provider.name": compaction.provider,
          "gen_ai.request.model": compaction.model,
        },
        run,
        describeCompaction,
      ),
    // Inside the round's span, which keeps the error's detail: its message may quote a statement and its
    // parameters, which no answer or log line carries.
    fault: (_round, error) => {
      trace.getActiveSpan()?.recordException(error instanceof Error ? error : String(error));
    },
  };
}

function describeRound(span: Span, result: InvokeResult<AgentExecuteResponse>): void {
  span.setAttribute("aptix.turn.outcome", roundOutcome(result));
  const usage = result.successful && result.result.kind === "final" ? result.result.usage : undefined;
  if (usage) {
    // The turn's usage so far, over all its rounds: the tokens this round spent are on its chat spans.
    span.setAttributes({
      "gen_ai.usage.input_tokens": usage.inputTokens,
      "gen_ai.usage.output_tokens": usage.outputTokens,
    });
  }
  failed(span, result);
}

function describeLlmCall(span: Span, result: LlmCallResult): void {
  if (!result.successful) {
    failed(span, result);
    return;
  }
  const { responseId, finishReason, usage } = result.result;
  span.setAttributes({
    "gen_ai.response.finish_reasons": [finishReason],
    "gen_ai.usage.input_tokens": usage.inputTokens,
    "gen_ai.usage.output_tokens": usage.outputTokens,
    ...(responseId === undefined ? {} : { "gen_ai.response.id": responseId }),
    ...(usage.cachedInputTokens === undefined
      ? {}
      : { "gen_ai.usage.cache_read.input_tokens": usage.cachedInputTokens }),
    ...(usage.reasoningTokens === undefined
      ? {}
      : { "gen_ai.usage.reasoning.output_tokens": usage.reasoningTokens }),
  });
}

function describeToolRun(span: Span, result: ToolRunResult): void {
  const outcome = toolRunOutcome(result);
  span.setAttribute("aptix.tool.outcome", outcome);
  // The tool's own error goes back to the model: an answer of the tool, not a failure of the span.
  if (outcome === "error") span.setAttribute("error.type", "tool_error");
  failed(span, result);
}

function describeRetrieval(span: Span, retrieval: Retrieval): void {
  span.setAttributes({
    "aptix.retrieval.outcome": retrieval.type,
    "aptix.retrieval.chunks": retrieval.type === "found" ? retrieval.chunks.length : 0,
  });
}

function describeCompaction(span: Span, result: CompactionResult): void {
  if (!result.successful) {
    failed(span, result);
    return;
  }
  span.setAttribute("aptix.compaction.outcome", result.result === undefined ? "nothing" : "compacted");
  if (result.result !== undefined)
    span.setAttribute("aptix.compaction.tokens_after", result.result.tokensAfter);
}

/**
 * Runs `run` in a new active span, lets `annotate` describe what it answered, and ends the span; a throw is
 * recorded as the span's error and thrown on.
 */
function inSpan<T>(
  tracer: Tracer,
  name: string,
  attributes: Attributes,
  run: () => Promise<T>,
  annotate: (span: Span, result: T) => void,
  kind: SpanKind = SpanKind.INTERNAL,
): Promise<T> {
  return tracer.startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      const result = await run();
      annotate(span, result);
      return result;
    } catch (error) {
      span.setAttribute("error.type", error instanceof Error ? error.name : "unknown");
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** A failed result marks its span as an error, typed by its code (its message may quote the provider). */
function failed(span: Span, result: InvokeResult<unknown>): void {
  if (result.successful) return;
  const { code } = result.errors[0];
  span.setAttribute("error.type", code);
  span.setStatus({ code: SpanStatusCode.ERROR, message: code });
}
