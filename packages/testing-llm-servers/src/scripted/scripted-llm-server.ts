/**
 * A scripted LLM server: the shared HTTP server, a queue of steps and ids unique to the server, with the members
 * a test drives the same way whatever API the server imitates.
 */
import { randomBytes } from "node:crypto";
import type { ScriptedRequestRecord } from "./recorded-request.js";
import type { ScriptedExchange } from "./scripted-exchange.js";
import { type ScriptedHttpServer, startScriptedHttpServer } from "./scripted-http-server.js";
import type { QueuedStep, StepQueue } from "./step-queue.js";

/** What a test drives on every scripted LLM server: its address, its request log and its script of steps. */
export interface ScriptedLlmServer<Step, R extends ScriptedRequestRecord, Self>
  extends ScriptedHttpServer<R> {
  /** What the SDK's `baseURL` (or its `*_BASE_URL` variable) expects. */
  readonly baseUrl: string;
  /** Replaces the pending steps with these. */
  script(...steps: Step[]): Self;
  /** Appends steps after the pending ones. */
  enqueue(...steps: Step[]): Self;
  /** How many scripted steps are still pending. */
  pendingSteps(): number;
  /** Clears requests and pending steps (and whatever else the server keeps). */
  reset(): void;
}

export interface ScriptedLlmServerOptions<Step extends object, R extends ScriptedRequestRecord, Self> {
  host?: string;
  port?: number;
  /** The steps the requests consume. */
  queue: StepQueue<Step, R>;
  /** What `baseUrl` adds to the origin (`/v1` for OpenAI, nothing for Anthropic). */
  basePath: string;
  handle(exchange: ScriptedExchange<R>): Promise<void>;
  /** The JSON body of the 500 sent when `handle` throws before answering, in the API's error shape. */
  internalErrorBody(message: string): unknown;
  /** Clears what the server keeps besides requests and steps. */
  onReset?(): void;
  /** The server object `script()` and `enqueue()` return. */
  self(): Self;
}

/** Starts the HTTP server; resolves once it listens, with the members every scripted LLM server has. */
export async function startScriptedLlmServer<Step extends object, R extends ScriptedRequestRecord, Self>(
  options: ScriptedLlmServerOptions<Step, R, Self>,
): Promise<ScriptedLlmServer<QueuedStep<Step, R>, R, Self>> {
  const { queue } = options;
  const http = await startScriptedHttpServer<R>({
    host: options.host,
    port: options.port,
    handle: options.handle,
    internalErrorBody: options.internalErrorBody,
  });
  return {
    baseUrl: `${http.origin}${options.basePath}`,
    origin: http.origin,
    port: http.port,
    requests: http.requests,
    script(...steps) {
      queue.replace(steps);
      return options.self();
    },
    enqueue(...steps) {
      queue.append(steps);
      return options.self();
    },
    pendingSteps: () => queue.size,
    reset() {
      http.requests.length = 0;
      queue.clear();
      options.onReset?.();
    },
    close: () => http.close(),
  };
}

/** The `POST` requests to a path (the API's create requests), in order. */
export function postsTo<R extends ScriptedRequestRecord>(requests: readonly R[], path: RegExp): R[] {
  return requests.filter((request) => request.method === "POST" && path.test(request.path));
}

/** Ids unique to one server: `<kind>_<8 random hex digits><counter in hex, zero-padded to counterDigits>`. */
export function scriptedIds(counterDigits: number): { prefix: string; next(kind: string): string } {
  const prefix = randomBytes(4).toString("hex");
  let counter = 0;
  return {
    prefix,
    next: (kind) => `${kind}_${prefix}${(++counter).toString(16).padStart(counterDigits, "0")}`,
  };
}
