/** A function tool as offered to the model: the same shape for client and server tools. */
export interface ToolDefinition {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
  /**
   * OpenAI's strict mode (structured outputs): `true` when `parameters` is written in strict form already,
   * `false` never to ask for it; left out, the schema is sent in strict form when it has one (`wireParameters`).
   */
  strict?: boolean;
}
