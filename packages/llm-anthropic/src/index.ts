export {
  AnthropicMessagesProvider,
  type AnthropicMessagesProviderOptions,
} from "./anthropic-messages-provider.js";
