export { countAnthropicContextTokens } from "./anthropic/context-tokens.js";
export type {
  AnthropicRecordedRequest,
  AnthropicScriptStep,
  AnthropicStepObject,
} from "./anthropic/script.js";
export { anthropicStep } from "./anthropic/script.js";
export { type ScriptedAnthropic, startScriptedAnthropic } from "./anthropic/server.js";
export { validateMessagesRequest } from "./anthropic/validate.js";
export { countOpenAIContextTokens } from "./openai/context-tokens.js";
export { hashedEmbedding } from "./openai/embeddings.js";
export { extractSchemas, referencedComponents, VALIDATED_SCHEMAS } from "./openai/extract-schemas.js";
export {
  preloadOpenAISchemas,
  readOpenAISchemas,
  validateCreateResponse,
  validateOpenAISchema,
} from "./openai/openapi.js";
export type { RecordedRequest, ScriptStep, StepObject } from "./openai/script.js";
export { step } from "./openai/script.js";
export { type ScriptedOpenAI, startScriptedOpenAI } from "./openai/server.js";
export { ITEM_OVERHEAD_TOKENS, MEDIA_PART_TOKENS } from "./scripted/context-tokens.js";
