export type {
  AnthropicDropStep,
  AnthropicErrorStep,
  AnthropicRawStep,
  AnthropicRecordedAnswer,
  AnthropicRecordedRequest,
  AnthropicReplyStep,
  AnthropicScriptStep,
  AnthropicStepObject,
  AnthropicStreamEvent,
  AnthropicUsageSpec,
  ThinkingSpec,
  ToolUseSpec,
} from "./anthropic/script.js";
export { anthropicStep } from "./anthropic/script.js";
export {
  type ScriptedAnthropic,
  type ScriptedAnthropicOptions,
  startScriptedAnthropic,
} from "./anthropic/server.js";
export { type AnthropicValidationOptions, validateMessagesRequest } from "./anthropic/validate.js";
export {
  DEFAULT_EMBEDDING_DIMENSIONS,
  hashedEmbedding,
  parseEmbeddingsRequest,
} from "./openai/embeddings.js";
export {
  extractSchemas,
  type OpenAISchemaExtract,
  referencedComponents,
  VALIDATED_SCHEMAS,
} from "./openai/extract-schemas.js";
export {
  OPENAI_SCHEMAS_FILE,
  preloadOpenAISchemas,
  readOpenAISchemas,
  type SchemaValidationResult,
  type SchemaViolation,
  validateCreateResponse,
  validateOpenAISchema,
} from "./openai/openapi.js";
export type {
  DropStep,
  ErrorStep,
  FunctionCallSpec,
  RawStep,
  ReasoningSpec,
  RecordedAnswer,
  RecordedRequest,
  ReplyStep,
  ScriptStep,
  StepObject,
  UsageSpec,
} from "./openai/script.js";
export { step } from "./openai/script.js";
export {
  type ScriptedOpenAI,
  type ScriptedOpenAIOptions,
  type StoredResponse,
  startScriptedOpenAI,
} from "./openai/server.js";
export type { WireResponse } from "./openai/wire.js";
