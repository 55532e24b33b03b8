import type { InvokeResult } from "@aptix/contracts";

/**
 * One layer of the agent pipeline (AGN-027 §4). Every step answers an InvokeResult, and a failed one
 * stops the pipeline: its errors go back to the client as they are (AGN-027 §5).
 */
export interface PipelineStep<I, O> {
  run(input: I): Promise<InvokeResult<O>>;
}
