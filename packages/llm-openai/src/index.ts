export { fromResponsesOutput } from "./from-responses-output.js";
export { OpenAIResponsesProvider, type OpenAIResponsesProviderOptions } from "./openai-responses-provider.js";
export { providerError, type ReceivedAnswer, StreamErrorEvent } from "./provider-error.js";
export { toResponsesInput } from "./to-responses-input.js";
