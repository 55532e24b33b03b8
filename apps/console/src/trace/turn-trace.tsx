import type { TurnTraceJson } from "@aptix/client";
import { useState } from "react";
import { useConnection } from "../connection.js";
import { formatMs, formatTokens } from "../format.js";
import { LoadedView } from "../loaded-view.js";
import { useResult } from "../use-result.js";
import { traceToWaterfall, type WaterfallBar } from "./waterfall.js";

/** A turn's trace, read when the user opens it. */
export function TurnTrace({ sessionId, turnId }: { sessionId: string; turnId: string }) {
  const [open, setOpen] = useState(false);
  return (
    <details className="trace" onToggle={(event) => setOpen(event.currentTarget.open)}>
      <summary>Trace</summary>
      {open && <LoadedTrace sessionId={sessionId} turnId={turnId} />}
    </details>
  );
}

function LoadedTrace({ sessionId, turnId }: { sessionId: string; turnId: string }) {
  const { client } = useConnection();
  const { loaded } = useResult(
    (signal) => client.getTurnTrace(sessionId, turnId, { signal }),
    `${sessionId}\n${turnId}`,
  );
  return <LoadedView loaded={loaded}>{(trace) => <WaterfallView trace={trace} />}</LoadedView>;
}

/** The waterfall: a row a bar, placed and sized on the turn's time axis; an LLM call's request on demand. */
function WaterfallView({ trace }: { trace: TurnTraceJson }) {
  const { bars, totalMs } = traceToWaterfall(trace);
  const [shown, setShown] = useState<number>();
  if (bars.length === 0) return <p>No LLM call or tool run was recorded for this turn.</p>;
  const scale = totalMs > 0 ? 100 / totalMs : 0;
  const request = trace.llmCalls.find((call) => call.index === shown)?.request;
  return (
    <div>
      <ol className="waterfall" aria-label="Trace waterfall">
        {bars.map((bar, position) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: bars have no id; their order is fixed by the trace.
          <li key={position} className={`bar-row bar-${bar.kind}`}>
            <span className="bar-label">{labelOf(bar)}</span>
            <span className="bar-track">
              <span
                className={`bar ${bar.kind === "tool" ? `bar-${bar.outcome}` : bar.error ? "bar-error" : ""}`}
                style={{ left: `${bar.startMs * scale}%`, width: `max(2px, ${bar.durationMs * scale}%)` }}
              />
            </span>
            {bar.kind === "llm" && (
              <button
                type="button"
                className="quiet"
                aria-pressed={shown === bar.index}
                onClick={() => setShown(shown === bar.index ? undefined : bar.index)}
              >
                Composed request
              </button>
            )}
          </li>
        ))}
      </ol>
      <p className="axis">0 ms — {formatMs(totalMs)}</p>
      {shown !== undefined && (
        <figure aria-label="Composed request">
          <pre>{request ? JSON.stringify(request, null, 2) : "Dropped by the trace retention."}</pre>
        </figure>
      )}
    </div>
  );
}

function labelOf(bar: WaterfallBar): string {
  if (bar.kind === "tool") return `Tool ${bar.name} · ${bar.outcome} · ${formatMs(bar.durationMs)}`;
  const tokens = `${formatTokens(bar.inputTokens)} in / ${formatTokens(bar.outputTokens)} out`;
  return `LLM ${bar.model} · ${tokens} · ${formatMs(bar.durationMs)}${bar.error ? ` · ${bar.error}` : ""}`;
}
