import type { TurnObserver } from "@aptix/core";

/** One observer made of several: the first given watches outermost, each run still runs once. */
export function observers(first: TurnObserver, ...rest: TurnObserver[]): TurnObserver {
  return rest.reduce<TurnObserver>(
    (outer, inner) => ({
      round: (round, run) => outer.round(round, () => inner.round(round, run)),
      llmCall: (call, run) => outer.llmCall(call, () => inner.llmCall(call, run)),
      toolRun: (tool, run) => outer.toolRun(tool, () => inner.toolRun(tool, run)),
      retrieval: (query, run) => outer.retrieval(query, () => inner.retrieval(query, run)),
      compaction: (compaction, run) => outer.compaction(compaction, () => inner.compaction(compaction, run)),
      fault: (round, error) => {
        outer.fault?.(round, error);
        inner.fault?.(round, error);
      },
    }),
    first,
  );
}
