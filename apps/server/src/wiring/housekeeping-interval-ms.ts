/**
 * How often the housekeeping runs: it fails turns whose instance stopped as soon as their lease has expired
 * (their client may still send the round again and have it run again), prunes old stream events and deletes
 * expired files. A turn left running is failed within a quarter lease of its expiry, a minute at most.
 */
export function housekeepingIntervalMs(leaseMs: number): number {
  return Math.min(60_000, Math.max(100, Math.floor(leaseMs / 4)));
}
