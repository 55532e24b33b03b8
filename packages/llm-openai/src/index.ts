export { fromResponsesOutput } from "./from-responses-output.js";
export type { OpenAIClientOptions } from "./openai-client.js";
export { OpenAIEmbedder, type OpenAIEmbedderOptions } from "./openai-embedder.js";
export { OpenAIResponsesProvider, type OpenAIResponsesProviderOptions } from "./openai-responses-provider.js";
export { providerError, type ReceivedAnswer, StreamErrorEvent } from "./provider-error.js";
export { toResponsesInput } from "./to-responses-input.js";
