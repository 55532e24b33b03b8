export {
  AnthropicMessagesProvider,
  type AnthropicMessagesProviderOptions,
  DEFAULT_ANTHROPIC_MAX_TOKENS,
} from "./anthropic-messages-provider.js";
export { finishReason, fromAnthropicMessage, usageOf } from "./from-anthropic-message.js";
export { providerError } from "./provider-error.js";
export {
  type AnthropicConversation,
  type AnthropicMessageParam,
  toAnthropicMessages,
} from "./to-anthropic-messages.js";
