/** What every scripted server records about a request, whatever API it imitates. */
import type { IncomingHttpHeaders } from "node:http";

/** How the harness answered a request; providers add the id of what a reply returned. */
export interface ScriptedAnswer {
  status: number;
  /** A step's kind; `exhausted`: no step was left; `harness`: the harness itself answered (validation, auth, routing, …). */
  kind: "reply" | "error" | "raw" | "drop" | "exhausted" | "harness";
  /** The JSON body sent (non-streaming, non-raw answers). */
  body?: unknown;
}

/** One HTTP request the server received. `Answer` and `Event` are the provider's answer and stream event. */
export interface ScriptedRequestRecord<Answer extends ScriptedAnswer = ScriptedAnswer, Event = unknown> {
  /** 0-based position among all requests this server received. */
  index: number;
  method: string;
  /** Path and query, e.g. `/v1/responses` or `/v1/messages?beta=true`. */
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** The parsed JSON body; `undefined` when there was none or it was not JSON. */
  body: unknown;
  receivedAt: number;
  /**
   * The TCP connection that carried it, numbered from 1 in the order the server accepted them: requests with one
   * number went over a kept-alive connection.
   */
  connection: number;
  /** A create request with `stream: true`. */
  stream: boolean;
  /** Whether a scripted step was consumed for this request. */
  consumedStep: boolean;
  /**
   * The tokens this request put in the model's context (`countOpenAIContextTokens` /
   * `countAnthropicContextTokens`): set on every create request that passed the API's checks, whether or not it
   * was refused for the window.
   */
  contextTokens?: number;
  /** The context window in force when `contextTokens` was counted (`undefined`: none). */
  contextWindowTokens?: number;
  /** Set with `contextTokens`: `true` when the request was refused for exceeding the window (no step consumed). */
  contextOverflow?: boolean;
  /** Filled in once the answer starts. */
  answer?: Answer;
  /** Server-sent events written so far (streamed replies), in order. */
  events: Event[];
}
