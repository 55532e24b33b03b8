import { abortableSleep } from "./abortable-sleep.js";
import type { AptixClientOptions } from "./aptix-client-options.js";
import { AptixProtocolError } from "./aptix-protocol-error.js";
import { backoffDelay } from "./backoff-delay.js";
import { DEFAULT_RETRY, type RetryOptions } from "./retry-options.js";

export interface SendOptions {
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal | undefined;
}

/**
 * Sends requests to the service and retries the answers that say "later": `SESSION_BUSY` (409), 429 (the
 * service's `RATE_LIMITED`, or a proxy's; not `BUDGET_EXCEEDED`) and 503, after `Retry-After` and a jittered exponential backoff, at most
 * `maxAttempts` times. `TURN_INTERRUPTED` (503) is a failed turn's stored answer, the same on every retry, so it
 * is returned at once. Nothing else is retried.
 */
export class HttpTransport {
  readonly retry: Required<RetryOptions>;
  readonly #baseUrl: string;
  readonly #apiKey: string | undefined;
  readonly #fetch: typeof fetch;

  constructor(options: AptixClientOptions) {
    this.#baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.#apiKey = options.apiKey;
    // Called unbound (`globalThis.fetch` refuses another `this` in browsers).
    const fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#fetch = fetchImpl;
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
  }

  async send(method: string, path: string, options: SendOptions = {}): Promise<Response> {
    const headers = new Headers(options.headers);
    if (this.#apiKey !== undefined) headers.set("authorization", `Bearer ${this.#apiKey}`);
    if (options.body !== undefined) headers.set("content-type", "application/json");
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    for (let attempt = 1; ; attempt++) {
      options.signal?.throwIfAborted();
      const response = await this.#fetch(`${this.#baseUrl}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body }),
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
      if (attempt >= this.retry.maxAttempts || !(await isRetryable(response))) return response;
      await response.body?.cancel().catch(() => undefined);
      await abortableSleep(
        backoffDelay(attempt, response.headers.get("retry-after"), this.retry),
        options.signal,
      );
    }
  }
}

async function isRetryable(response: Response): Promise<boolean> {
  // Too many requests, whoever says so, means "later", whatever the body; but a spent budget frees up only when
  // it resets (as late as next month): its refusal goes back to the caller at once.
  if (response.status === 429) return (await firstErrorCode(response)) !== "BUDGET_EXCEEDED";
  if (response.status !== 409 && response.status !== 503) return false;
  const code = await firstErrorCode(response);
  return response.status === 409 ? code === "SESSION_BUSY" : code !== "TURN_INTERRUPTED";
}

/** The first error code of a JSON answer, read from a copy so the answer itself stays unread. */
async function firstErrorCode(response: Response): Promise<string | undefined> {
  try {
    const body = (await response.clone().json()) as { errors?: Array<{ code?: unknown }> };
    const code = body.errors?.[0]?.code;
    return typeof code === "string" ? code : undefined;
  } catch {
    return undefined;
  }
}

/** The JSON body of an answer; a body that is not JSON is a protocol error. */
export async function jsonBody(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text) as unknown;
  } catch (cause) {
    throw new AptixProtocolError(`HTTP ${response.status}: the body is not JSON: ${text.slice(0, 200)}`, {
      status: response.status,
      cause,
    });
  }
}
