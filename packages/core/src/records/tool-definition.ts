/** A function tool as offered to the model: the same shape for client and server tools. */
export interface ToolDefinition {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
  /** Ask the provider to enforce `parameters` exactly (OpenAI structured outputs). */
  strict?: boolean;
}
