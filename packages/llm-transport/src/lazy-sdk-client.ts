import { fail, type InvokeFailure } from "@aptix/contracts";

/**
 * How the adapter's HTTP agent keeps connections: the option names of undici's `Agent`, which `keepAliveFetch`
 * builds. Idle connections are kept between a turn's calls, which are often seconds apart while tools run, so a
 * call does not pay for a new TCP and TLS handshake.
 */
export interface KeepAliveAgentOptions {
  /** How long an idle connection is kept when the server's `Keep-Alive` header does not say. */
  keepAliveTimeout: number;
  /** The SDK's timeout: the agent waits for an answer's headers as long as the SDK does (undici's own: 300 s). */
  headersTimeout: number;
}

/** What the official SDKs (`openai`, `@anthropic-ai/sdk`) both take to build a client, and its HTTP agent's. */
export interface SdkClientOptions {
  apiKey: string;
  maxRetries: number;
  timeout: number;
  baseURL?: string;
  agent: KeepAliveAgentOptions;
}

/** How long an idle connection to the provider is kept for the next call. */
const KEEP_ALIVE_MS = 30_000;

export interface LazySdkClientOptions<C> {
  /** The LlmProvider's id, for the failure's details. */
  provider: string;
  /** Who the service cannot call without the key, e.g. `OpenAI`. */
  vendor: string;
  /** The environment variable that holds the key, named in the failure (e.g. `OPENAI_API_KEY`). */
  keyVariable: string;
  /** Read on first use, so a key set before the first call counts. */
  apiKey: () => string | undefined;
  baseURL?: string | undefined;
  /** SDK retries of 408/409/429/5xx and connection errors. Default 2. */
  maxRetries?: number | undefined;
  /** Per-attempt timeout. Default 120 s. */
  timeoutMs?: number | undefined;
  create: (options: SdkClientOptions) => C;
}

/**
 * A provider SDK's client, made on first use: a service without the provider's API key still starts, and each
 * call without one fails clearly (PROVIDER_ERROR, `reason: "not_configured"`) instead of the whole service.
 */
export class LazySdkClient<C> {
  readonly #options: LazySdkClientOptions<C>;
  #client: C | undefined;

  constructor(options: LazySdkClientOptions<C>) {
    this.#options = options;
  }

  get(): C | InvokeFailure {
    if (this.#client !== undefined) return this.#client;
    const { provider, vendor, keyVariable, baseURL, maxRetries, timeoutMs } = this.#options;
    const apiKey = this.#options.apiKey();
    if (!apiKey) {
      return fail("PROVIDER_ERROR", `${keyVariable} is not set: this service cannot call ${vendor}.`, {
        provider,
        reason: "not_configured",
      });
    }
    const timeout = timeoutMs ?? 120_000;
    this.#client = this.#options.create({
      apiKey,
      maxRetries: maxRetries ?? 2,
      timeout,
      ...(baseURL ? { baseURL } : {}),
      agent: { keepAliveTimeout: KEEP_ALIVE_MS, headersTimeout: timeout },
    });
    return this.#client;
  }
}
