import type { AgentService } from "@aptix/core";
import type { Logger } from "pino";
import { faultSummary } from "../logging/fault-summary.js";
import { housekeepingIntervalMs } from "./housekeeping-interval-ms.js";

/**
 * Runs the service's housekeeping every `housekeepingIntervalMs(leaseMs)`: turns left running by a stopped
 * instance are failed soon after their lease expires, even if nobody asks; stream events are pruned once their
 * turn has been over for APTIX_EVENT_RETENTION_MS; expired files are deleted; sessions idle past
 * APTIX_SESSION_RETENTION_DAYS are deleted, and traces older than APTIX_TRACE_RETENTION_DAYS lose their
 * payloads; a deleted session's responses stored at its provider are deleted there. `stop` waits for a run under
 * way.
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
    [
      () => service.sweepFiles(),
      "info",
      "deleted expired files and those of failed turns",
      "file retention sweep failed",
    ],
    [() => service.sweepIdleSessions(), "info", "deleted idle sessions", "session retention sweep failed"],
    [
      () => service.pruneTraces(),
      "info",
      "pruned the payloads of old traces",
      "trace retention sweep failed",
    ],
    [
      () => deleteStoredResponses(service, logger),
      "info",
      "deleted the stored provider responses of deleted sessions",
      "deleting stored provider responses failed",
    ],
  ] as const;
  const housekeep = async () => {
    for (const [sweep, level, removed, failed] of sweeps) {
      await sweep().then(
        (count) => count > 0 && logger[level]({ count }, removed),
        // A driver's message quotes the statement and its parameters: the line says what failed, not its text.
        (error: unknown) => logger.error({ fault: faultSummary(error) }, failed),
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
  const queue = pollQueuedTurns(service, logger);
  return {
    async stop() {
      clearInterval(timer);
      await Promise.all([running, queue.stop()]);
    },
  };
}

/**
 * How often an instance starts the queued turns whose turns before them ended: the instance ending a turn starts
 * the next one itself when it queued it, so this finds those queued on another instance (or left by one that
 * stopped), as the cancel poll finds cancels: one indexed read of the few queued turns.
 */
const QUEUE_POLL_MS = 2_000;

/** Starts the queued turns no instance started, every QUEUE_POLL_MS, one run at a time. */
function pollQueuedTurns(service: AgentService, logger: Logger): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    running ??= service
      .startQueuedTurns()
      .then(
        (count) => count > 0 && logger.info({ count }, "started queued turns"),
        (error: unknown) => logger.error({ fault: faultSummary(error) }, "starting queued turns failed"),
      )
      .then(() => {
        running = undefined;
      });
  }, QUEUE_POLL_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

/** One run of the deletions at providers: each failure told (to be tried again), each given up on told louder. */
async function deleteStoredResponses(service: AgentService, logger: Logger): Promise<number> {
  const run = await service.deleteStoredResponses();
  for (const failure of run.failed) {
    logger.warn(
      failure,
      "a provider did not delete a stored response of a deleted session; it is tried again later",
    );
  }
  if (run.abandoned > 0) {
    logger.error(
      { count: run.abandoned },
      "gave up deleting stored provider responses of deleted sessions; the provider expires them on its own",
    );
  }
  return run.deleted;
}
