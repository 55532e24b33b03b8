import type { AgentService } from "@aptix/core";
import type { Logger } from "pino";
import { housekeepingIntervalMs } from "./housekeeping-interval-ms.js";

/**
 * Runs the service's housekeeping every `housekeepingIntervalMs(leaseMs)`: turns left running by a stopped
 * instance are failed soon after their lease expires, even if nobody asks; stream events are pruned once their
 * turn has been over for APTIX_EVENT_RETENTION_MS; expired files are deleted; sessions idle past
 * APTIX_SESSION_RETENTION_DAYS are deleted, and traces older than APTIX_TRACE_RETENTION_DAYS lose their
 * payloads. `stop` waits for a run under way.
 */
export function startHousekeeping(
  service: AgentService,
  logger: Logger,
  leaseMs: number,
): { stop(): Promise<void> } {
  // Each sweep, the level and line of what it removed, and the line of its failure. A failed one does not
  // stop the others.
  const sweeps = [
    [() => service.failExpiredTurns(), "warn", "failed turns whose instance stopped", "reaper failed"],
    [
      () => service.pruneTurnEvents(),
      "info",
      "pruned the stream events of ended turns",
      "event pruning failed",
    ],
    [() => service.sweepExpiredFiles(), "info", "deleted expired files", "file retention sweep failed"],
    [() => service.sweepIdleSessions(), "info", "deleted idle sessions", "session retention sweep failed"],
    [
      () => service.pruneTraces(),
      "info",
      "pruned the payloads of old traces",
      "trace retention sweep failed",
    ],
  ] as const;
  const housekeep = async () => {
    for (const [sweep, level, removed, failed] of sweeps) {
      await sweep().then(
        (count) => count > 0 && logger[level]({ count }, removed),
        (error: unknown) => logger.error({ error: String(error) }, failed),
      );
    }
  };
  // One run at a time: a tick that finds the last run still going skips, so a slow database piles nothing up.
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    running ??= housekeep().finally(() => {
      running = undefined;
    });
  }, housekeepingIntervalMs(leaseMs));
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
