import type { AgentService } from "@aptix/core";
import type { Logger } from "../logging/logger.js";
import { housekeepingIntervalMs } from "./housekeeping-interval-ms.js";

/**
 * Runs the service's housekeeping every `housekeepingIntervalMs(leaseMs)`: turns left running by a stopped
 * instance are failed soon after their lease expires, even if nobody asks; stream events are pruned once their
 * turn has been over for APTIX_EVENT_RETENTION_MS; expired files are deleted; sessions idle past
 * APTIX_SESSION_RETENTION_DAYS are deleted, and traces older than APTIX_TRACE_RETENTION_DAYS lose their payloads. `stop` waits for a run under way.
 */
export function startHousekeeping(
  service: AgentService,
  logger: Logger,
  leaseMs: number,
): { stop(): Promise<void> } {
  const housekeep = async () => {
    await service.failExpiredTurns().then(
      (count) => count > 0 && logger.log("warn", "failed turns whose instance stopped", { count }),
      (error: unknown) => logger.log("error", "reaper failed", { error: String(error) }),
    );
    await service.pruneTurnEvents().then(
      (count) => count > 0 && logger.log("info", "pruned the stream events of ended turns", { count }),
      (error: unknown) => logger.log("error", "event pruning failed", { error: String(error) }),
    );
    await service.sweepExpiredFiles().then(
      (count) => count > 0 && logger.log("info", "deleted expired files", { count }),
      (error: unknown) => logger.log("error", "file retention sweep failed", { error: String(error) }),
    );
    await service.sweepIdleSessions().then(
      (count) => count > 0 && logger.log("info", "deleted idle sessions", { count }),
      (error: unknown) => logger.log("error", "session retention sweep failed", { error: String(error) }),
    );
    await service.pruneTraces().then(
      (count) => count > 0 && logger.log("info", "pruned the payloads of old traces", { count }),
      (error: unknown) => logger.log("error", "trace retention sweep failed", { error: String(error) }),
    );
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
