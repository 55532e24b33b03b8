export { keepAliveFetch } from "./keep-alive-fetch.js";
export {
  type KeepAliveAgentOptions,
  LazySdkClient,
  type LazySdkClientOptions,
  type SdkClientOptions,
} from "./lazy-sdk-client.js";
