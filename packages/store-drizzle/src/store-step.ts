/**
 * A step of opening the store, told once as it starts and once done with its duration: what start-up lines
 * say while a first start spends its tens of seconds.
 */
export interface StoreStep {
  /**
   * `create`: a new embedded PGlite database is initialized (its initdb, the long part of a first start);
   * `open`: the embedded database starts; `migrate`: the pending migrations of the schema are applied.
   */
  name: "create" | "open" | "migrate";
  /** Absent as the step starts; how long it took once done. */
  durationMs?: number;
}

/** Runs `work` as the step `name`, telling `onStep` as it starts and as it ends (not when it fails). */
export async function timedStep<T>(
  onStep: ((step: StoreStep) => void) | undefined,
  name: StoreStep["name"],
  work: () => Promise<T>,
): Promise<T> {
  onStep?.({ name });
  const started = performance.now();
  const result = await work();
  onStep?.({ name, durationMs: Math.round(performance.now() - started) });
  return result;
}
