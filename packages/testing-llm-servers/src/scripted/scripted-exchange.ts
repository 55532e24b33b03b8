/** One request a scripted server received, with the ways of answering it that mean the same for every API. */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ScriptedAnswer, ScriptedRequestRecord } from "./recorded-request.js";

/** A verbatim answer (a `raw` step): the body is sent as it is, valid or not. */
export interface VerbatimAnswer {
  body: string;
  /** Default 200. */
  status?: number;
  /** Default `application/json`. */
  contentType?: string;
  headers?: Record<string, string>;
}

/**
 * A request, its response and its record. Every answer is written into `record.answer` as it starts, so a test
 * can see how the harness answered even when the client never read it.
 */
export class ScriptedExchange<R extends ScriptedRequestRecord = ScriptedRequestRecord> {
  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly record: R,
    /** Aborts when the response closes (answered, or the client went away). */
    readonly signal: AbortSignal,
  ) {}

  /**
   * Parses the body of a create request strictly (an empty body is not JSON): records it and its `stream` flag,
   * and returns it as an object (`{}` for JSON that is not one), or `undefined` when it is not JSON.
   */
  parseJsonBody(): Record<string, unknown> | undefined {
    let parsed: unknown;
    try {
      parsed = JSON.parse(this.record.rawBody);
    } catch {
      return undefined;
    }
    this.record.body = parsed;
    const body =
      parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)
        ? (parsed as Record<string, unknown>)
        : {};
    this.record.stream = body.stream === true;
    return body;
  }

  /** Answers `body` as JSON; `headers` come after the content type (and may replace it). */
  sendJson(
    status: number,
    body: unknown,
    kind: ScriptedAnswer["kind"],
    headers: Record<string, string>,
  ): void {
    this.answer({ status, kind, body });
    this.res.writeHead(status, { "content-type": "application/json", ...headers });
    this.res.end(JSON.stringify(body));
  }

  /** Answers a `raw` step; its own headers come after the harness's `headers`. */
  sendRaw(step: VerbatimAnswer, headers: Record<string, string> = {}): void {
    const status = step.status ?? 200;
    this.answer({ status, kind: "raw" });
    this.res.writeHead(status, {
      "content-type": step.contentType ?? "application/json",
      ...headers,
      ...step.headers,
    });
    this.res.end(step.body);
  }

  /** Answers a `drop` step: the connection is destroyed without a status line (clients see a network error). */
  drop(): void {
    this.answer({ status: 0, kind: "drop" });
    this.req.socket.destroy();
  }

  private answer(answer: ScriptedAnswer): void {
    // Every provider's answer type is a ScriptedAnswer plus optional ids, so a plain one fits all of them.
    const record: ScriptedRequestRecord = this.record;
    record.answer = answer;
  }
}
