import { fail, type InvokeFailure } from "@aptix/contracts";

/** What the official SDKs (`openai`, `@anthropic-ai/sdk`) both take to build a client. */
export interface SdkClientOptions {
  apiKey: string;
  maxRetries: number;
  timeout: number;
  baseURL?: string;
}

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
    this.#client = this.#options.create({
      apiKey,
      maxRetries: maxRetries ?? 2,
      timeout: timeoutMs ?? 120_000,
      ...(baseURL ? { baseURL } : {}),
    });
    return this.#client;
  }
}
