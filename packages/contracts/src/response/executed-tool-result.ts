import { z } from "zod";
import { toolOutcomeShape, withExactlyOneOutcome } from "../request/tool-result.js";
import { ToolCallSchema } from "./tool-call.js";

/** A tool the server ran during the turn, reported for visibility only (AGN-033 §5.3). */
export const ExecutedToolResultSchema = withExactlyOneOutcome(
  z.strictObject({ ...toolOutcomeShape(), name: ToolCallSchema.shape.name }),
);

export type ExecutedToolResult = z.infer<typeof ExecutedToolResultSchema>;
