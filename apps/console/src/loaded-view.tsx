import type { ReactNode } from "react";
import type { Loaded } from "./use-result.js";

/** A loading line, the error in an alert, or the value rendered. */
export function LoadedView<T>({
  loaded,
  children,
}: {
  loaded: Loaded<T>;
  children: (value: T) => ReactNode;
}) {
  if (loaded.state === "loading") return <p aria-busy="true">Loading…</p>;
  if (loaded.state === "failed") return <p role="alert">{loaded.error}</p>;
  return <>{children(loaded.value)}</>;
}
