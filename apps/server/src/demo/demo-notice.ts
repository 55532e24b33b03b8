import type { InvokeWarning } from "@aptix/contracts";

/** The warning every answer of a demo service carries (its `/readyz` too): no answer of it is a real model's. */
export const DEMO_NOTICE: InvokeWarning = {
  code: "DEMO_MODEL",
  message:
    "This service runs the built-in demo model (APTIX_DEMO): its answers are scripted, no provider is called. " +
    "Start it without APTIX_DEMO, with a provider key, for real answers.",
};
