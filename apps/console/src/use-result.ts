import type { AptixResult } from "@aptix/client";
import { useCallback, useEffect, useState } from "react";

export type Loaded<T> =
  | { state: "loading" }
  | { state: "failed"; error: string }
  | { state: "loaded"; value: T };

/** Runs `load` when `key` changes (and on `reload`), keeping only the latest answer. */
export function useResult<T>(load: (signal: AbortSignal) => Promise<AptixResult<T>>, key: string) {
  const [loaded, setLoaded] = useState<Loaded<T>>({ state: "loading" });
  const [round, setRound] = useState(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `key` names what `load` reads.
  useEffect(() => {
    const controller = new AbortController();
    setLoaded({ state: "loading" });
    load(controller.signal).then(
      (result) => {
        if (controller.signal.aborted) return;
        if (result.successful) setLoaded({ state: "loaded", value: result.result });
        else setLoaded({ state: "failed", error: `${result.errors[0].code}: ${result.errors[0].message}` });
      },
      (error: unknown) => {
        if (!controller.signal.aborted) setLoaded({ state: "failed", error: String(error) });
      },
    );
    return () => controller.abort();
  }, [key, round]);
  const reload = useCallback(() => setRound((n) => n + 1), []);
  return { loaded, reload };
}
