import type { TurnTraceJson } from "@aptix/client";

/** One bar of a turn's waterfall: an LLM call or a tool run, in ms from the turn's start. */
export type WaterfallBar =
  | {
      kind: "llm";
      /** The call's index in the turn, which "Composed request" looks up. */
      index: number;
      model: string;
      inputTokens: number | undefined;
      outputTokens: number | undefined;
      startMs: number;
      durationMs: number;
      error: string | undefined;
    }
  | {
      kind: "tool";
      name: string;
      startMs: number;
      durationMs: number;
      outcome: "ok" | "error" | "declined";
    };

export interface Waterfall {
  bars: WaterfallBar[];
  /** The time axis' end: the last bar's end. */
  totalMs: number;
}

type LlmCallJson = TurnTraceJson["llmCalls"][number];

/**
 * Lays a turn's trace out on a time axis. LLM calls and tool runs carry their own start. A run recorded before
 * the service kept its start carries only its duration, so it starts where the call that asked for it ended
 * (after the runs of that call before it), which is when the service runs it; one no call of the trace asked for
 * follows every bar laid out before it.
 */
export function traceToWaterfall(trace: TurnTraceJson): Waterfall {
  const origin = Math.min(
    Date.parse(trace.createdAt),
    ...trace.llmCalls.map((call) => Date.parse(call.startedAt)),
    ...trace.toolExecutions.flatMap((run) => (run.startedAt ? [Date.parse(run.startedAt)] : [])),
  );
  const calls = [...trace.llmCalls].sort((a, b) => a.index - b.index);
  const nextStartOf = new Map<string, number>();
  const bars: WaterfallBar[] = [];
  for (const call of calls) {
    const startMs = Date.parse(call.startedAt) - origin;
    const usage = usageOf(call);
    bars.push({
      kind: "llm",
      index: call.index,
      model: modelOf(call),
      inputTokens: usage?.inputTokens,
      outputTokens: usage?.outputTokens,
      startMs,
      durationMs: call.durationMs,
      error: call.error ? `${call.error.code}: ${call.error.message}` : undefined,
    });
    for (const id of toolCallIdsOf(call)) nextStartOf.set(id, startMs + call.durationMs);
  }
  const ranAfter = new Map<number, number>();
  for (const run of trace.toolExecutions) {
    const askedAt = nextStartOf.get(run.toolCallId);
    const startMs = run.startedAt
      ? Date.parse(run.startedAt) - origin
      : askedAt === undefined
        ? endOf(bars)
        : (ranAfter.get(askedAt) ?? askedAt);
    if (askedAt !== undefined) ranAfter.set(askedAt, startMs + run.executionMs);
    bars.push({
      kind: "tool",
      name: run.name,
      startMs,
      durationMs: run.executionMs,
      outcome:
        run.approval?.approved === false ? "declined" : run.errorMessage !== undefined ? "error" : "ok",
    });
  }
  bars.sort((a, b) => a.startMs - b.startMs);
  return { bars, totalMs: endOf(bars) };
}

function endOf(bars: readonly WaterfallBar[]): number {
  return Math.max(0, ...bars.map((bar) => bar.startMs + bar.durationMs));
}

/** The model the call asked for: the composed request's, or the wire request's once retention dropped that. */
function modelOf(call: LlmCallJson): string {
  const model = call.request?.model ?? (call.providerRequest as { model?: unknown } | null)?.model;
  return typeof model === "string" ? model : "unknown model";
}

function usageOf(call: LlmCallJson): { inputTokens?: number; outputTokens?: number } | undefined {
  const usage = call.response?.usage;
  return typeof usage === "object" && usage !== null ? usage : undefined;
}

function toolCallIdsOf(call: LlmCallJson): string[] {
  const toolCalls = call.response?.toolCalls;
  if (!Array.isArray(toolCalls)) return [];
  return toolCalls.flatMap((toolCall: { callId?: unknown }) =>
    typeof toolCall.callId === "string" ? [toolCall.callId] : [],
  );
}
