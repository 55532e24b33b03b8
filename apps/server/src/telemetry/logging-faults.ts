import type { TurnObserver } from "@aptix/core";
import { trace } from "@opentelemetry/api";
import type { Logger } from "pino";
import { faultSummary } from "../logging/fault-summary.js";

/**
 * `observer`, with each unexpected failure of a round also logged: which round, and the error as `faultSummary`
 * gives it (its type, code and frames: never its message, which goes to the trace).
 */
export function loggingFaults(observer: TurnObserver, logger: Logger): TurnObserver {
  return {
    ...observer,
    fault(round, error) {
      observer.fault?.(round, error);
      // Core runs the round for the request without its logger: the trace id, when traces are exported, is
      // what joins this line to the request's span and the exception recorded there.
      const traceId = trace.getActiveSpan()?.spanContext().traceId;
      logger.error(
        {
          sessionId: round.sessionId,
          turnId: round.turnId,
          round: round.round,
          ...(traceId === undefined ? {} : { traceId }),
          fault: faultSummary(error),
        },
        "round failed unexpectedly",
      );
    },
  };
}
