import type { SessionCompacted, SessionDeleted } from "@aptix/contracts";
import type { CallOptions } from "./aptix-client.js";
import type { AptixResult } from "./aptix-result.js";
import type { HttpTransport } from "./http-transport.js";
import { callJson } from "./json-call.js";
import {
  readCompactedResult,
  readDeletedResult,
  readMessagesResult,
  readSessionListResult,
  type SessionListJson,
  type SessionMessagesJson,
} from "./lenient-schemas.js";

/** A page of a listing: `limit` 1–100 (default 20), `cursor` the previous page's `nextCursor`. */
export interface PageOptions extends CallOptions {
  limit?: number;
  cursor?: string;
}

/** The principal's sessions (`/v1/sessions`): list, read back, delete. */
export interface SessionsApi {
  /**
   * `GET /v1/sessions`: most recently active first; `workspaceId` keeps the sessions whose latest workspace it is,
   * `q` those whose title holds it, ignoring case (1–80 characters). Each page's `nextCursor` keeps the filters
   * it was answered with: pass them again with it.
   */
  list(options?: PageOptions & { workspaceId?: string; q?: string }): Promise<AptixResult<SessionListJson>>;
  /**
   * `GET …/messages`: the conversation as a UI shows it, oldest first, two messages a turn; the turns a rewind
   * went back before only with `include: "superseded"`.
   */
  messages(
    sessionId: string,
    options?: PageOptions & { include?: "superseded" },
  ): Promise<AptixResult<SessionMessagesJson>>;
  /** `DELETE /v1/sessions/:sessionId`: everything of it; `SESSION_BUSY` while a turn runs (cancel it first). */
  delete(sessionId: string, options?: CallOptions): Promise<AptixResult<SessionDeleted>>;
  /**
   * `POST …/compact`: summarises the conversation now, so the next turn starts from the summary and the recent
   * turns; `{ compacted: false }` when there was nothing new to compact, `SESSION_BUSY` while a turn is open.
   */
  compact(sessionId: string, options?: CallOptions): Promise<AptixResult<SessionCompacted>>;
}

export function sessionsApi(transport: HttpTransport): SessionsApi {
  const at = (sessionId: string, rest = "") => `/v1/sessions/${encodeURIComponent(sessionId)}${rest}`;
  return {
    list: ({ signal, ...query } = {}) =>
      callJson(transport, "GET", `/v1/sessions${queryOf(query)}`, readSessionListResult, { signal }),
    messages: (sessionId, { signal, ...query } = {}) =>
      callJson(transport, "GET", at(sessionId, `/messages${queryOf(query)}`), readMessagesResult, { signal }),
    delete: (sessionId, options = {}) =>
      callJson(transport, "DELETE", at(sessionId), readDeletedResult, { signal: options.signal }),
    compact: (sessionId, options = {}) =>
      callJson(transport, "POST", at(sessionId, "/compact"), readCompactedResult, { signal: options.signal }),
  };
}

function queryOf(query: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
}
