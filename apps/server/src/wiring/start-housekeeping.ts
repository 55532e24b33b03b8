import type { AgentService } from "@aptix/core";
import type { Logger } from "pino";
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
      (count) => count > 0 && logger.warn({ count }, "failed turns whose instance stopped"),
      (error: unknown) => logger.error({ error: String(error) }, "reaper failed"),
    );
    await service.pruneTurnEvents().then(
      (count) => count > 0 && logger.info({ count }, "pruned the stream events of ended turns"),
      (error: unknown) => logger.error({ error: String(error) }, "event pruning failed"),
    );
    await service.sweepExpiredFiles().then(
      (count) => count > 0 && logger.info({ count }, "deleted expired files"),
      (error: unknown) => logger.error({ error: String(error) }, "file retention sweep failed"),
    );
    await service.sweepIdleSessions().then(
      (count) => count > 0 && logger.info({ count }, "deleted idle sessions"),
      (error: unknown) => logger.error({ error: String(error) }, "session retention sweep failed"),
    );
    await service.pruneTraces().then(
      (count) => count > 0 && logger.info({ count }, "pruned the payloads of old traces"),
      (error: unknown) => logger.error({ error: String(error) }, "trace retention sweep failed"),
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
