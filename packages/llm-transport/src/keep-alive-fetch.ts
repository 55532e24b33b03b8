import { Agent, fetch as undiciFetch } from "undici";
import { type DispatcherFetchOptions, dispatcherFetch } from "./dispatcher-fetch.js";
import type { KeepAliveAgentOptions } from "./lazy-sdk-client.js";

/**
 * The `fetch` a provider SDK's client is given: {@link dispatcherFetch} over an undici `Agent` of its own, which
 * keeps idle connections between a turn's calls.
 */
export function keepAliveFetch(agent: KeepAliveAgentOptions): typeof fetch {
  return dispatcherFetch({
    dispatcher: new Agent(agent),
    // Typed by this undici, `fetch`'s by Node's undici-types: the same call, other type versions.
    fetch: undiciFetch as DispatcherFetchOptions<Agent>["fetch"],
  });
}
