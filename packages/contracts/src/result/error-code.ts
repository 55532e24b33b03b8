/**
 * Every error code the service answers with, and the HTTP status that carries it.
 * The HTTP status of a response mirrors its first error.
 */
export const ERROR_HTTP_STATUS = {
  /** The body is not a valid request; `details.fields` names each failing field. */
  VALIDATION_FAILED: 400,
  /** No or a wrong API key. */
  UNAUTHORIZED: 401,
  /**
   * No key would change the answer: a local-mode service refused where the request came from (another machine,
   * a proxy, a page of another site, a Host that is not loopback). The message says which.
   */
  FORBIDDEN: 403,
  /** No session of this principal has this id. */
  SESSION_NOT_FOUND: 404,
  /** The session has no turn with this id. */
  TURN_NOT_FOUND: 404,
  /** No file of this principal has this id. */
  FILE_NOT_FOUND: 404,
  /** The file existed but its content has expired (`FileRef.contentExpires` has passed). */
  FILE_EXPIRED: 410,
  /** No workspace of this principal has this id. */
  WORKSPACE_NOT_FOUND: 404,
  /** No route answers this method and path. */
  ROUTE_NOT_FOUND: 404,
  /** The path exists but answers other methods; `details.allow` lists them, as the `Allow` header does. */
  METHOD_NOT_ALLOWED: 405,
  /** Another turn of the session is running. Retry once it has finished. */
  SESSION_BUSY: 409,
  /** The turn id was used before with a different body. */
  TURN_ID_CONFLICT: 409,
  /** Tool results do not match the turn's tool calls in count, ids and order (AGN-033 §3.3). The turn failed. */
  TOOL_RESULTS_MISMATCH: 409,
  /** A tool continuation names a turn that is not awaiting client tools. */
  TURN_NOT_AWAITING_TOOLS: 409,
  /** The turn was cancelled (`POST …/turns/:turnId/cancel`) before it finished: nothing of it stays. */
  TURN_CANCELLED: 409,
  /** The body is larger than the server accepts. */
  PAYLOAD_TOO_LARGE: 413,
  /**
   * A storage quota of the principal is used up (`details.quota` names it, e.g. `APTIX_QUOTA_WORKSPACE_BYTES`);
   * nothing of the request was stored.
   */
  QUOTA_EXCEEDED: 413,
  /**
   * The turn's own new input (its message, artifacts, images, tool results) cannot fit in the model's context
   * window even once the conversation is compacted: `details.tokens`, `details.contextWindowTokens`. The turn
   * failed; the session goes on with the next turn.
   */
  CONTEXT_TOO_LARGE: 413,
  /** The body is not `application/json`. */
  UNSUPPORTED_MEDIA_TYPE: 415,
  /**
   * Too many requests, running turns or failed authentications; the `Retry-After` header (and
   * `details.retryAfterSeconds`) says when to try again.
   */
  RATE_LIMITED: 429,
  /**
   * A usage budget of the principal is spent, until it resets: a new user turn is refused, nothing stored; a
   * turn admitted before ends `failed` before its next LLM call (`details.turnId`, and `details.partialText`, the
   * text it had shown); a compaction asked for is refused. `details`: `budget` (`usdMonthly` or `tokensDaily`),
   * `used`, `limit`, `resetsAt` (ISO 8601); the `Retry-After` header says how many seconds until then.
   */
  BUDGET_EXCEEDED: 429,
  /**
   * The LLM provider failed or answered with something unusable; `details` carries the provider, its HTTP status
   * and error code, never a provider request or response id (those are in the turn's trace).
   */
  PROVIDER_ERROR: 502,
  /** The reasoner reached its iteration limit without a final answer or a client tool call. */
  ITERATION_LIMIT_EXCEEDED: 502,
  /** The server is starting, stopping, or cannot reach its database. */
  NOT_READY: 503,
  /**
   * The server instance running the turn stopped (or lost the session's lease) before the turn finished, and
   * another request took the session over: the turn failed. `details.retryable` is true: run it again as a
   * new turn.
   */
  TURN_INTERRUPTED: 503,
  /**
   * A server tool (built-in or from an MCP server) could not run: it threw, its transport failed, or it ran
   * longer than the server allows. The turn failed; the session goes on.
   */
  TOOL_FAILED: 502,
  /** A bug in the service. */
  INTERNAL: 500,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_HTTP_STATUS;

export const ERROR_CODES = Object.keys(ERROR_HTTP_STATUS) as [ErrorCode, ...ErrorCode[]];

export function httpStatusOf(code: ErrorCode): number {
  return ERROR_HTTP_STATUS[code];
}
