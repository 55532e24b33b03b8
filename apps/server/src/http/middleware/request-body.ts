import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import { fail } from "@aptix/contracts";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../app-env.js";
import { sendResult } from "../send-result.js";
import type { BodiesInFlight } from "./bodies-in-flight.js";
import { refuseBody } from "./refuse-body.js";

const TOO_LARGE = Symbol("too large");

/**
 * Reads the body of a request that may have one, whole, before its route (`c.get("body")`): PAYLOAD_TOO_LARGE
 * past `maxBytes`, judged by Content-Length before a byte is read, and by the bytes as they come for a body sent
 * without one: a larger body is never held whole. The first `requestBody` a request meets reads its body.
 * Under Node it reads the IncomingMessage itself: hono's Request around it, and hono's body limit around that,
 * cost every request two web streams and an AbortController (about 4% of the serving process's CPU in
 * `bench:e2e`). Elsewhere (`app.request` in tests) it reads the Request's body.
 *
 * Before a byte is read, the body is reserved in `inFlight` (the instance's bodies being read) by the size it
 * declares, or by `maxBytes` when it declares none (sent chunked): a refusal there answers at once, and the
 * reservation ends once the body is read, or reading it failed. A body refused unread, or past the limit, is
 * answered so that its client reads the answer (`refuseBody`: the rest is read and dropped, at most `maxBytes`).
 */
export function requestBody(maxBytes: number, inFlight: BodiesInFlight): MiddlewareHandler<AppEnv> {
  const tooLarge = fail("PAYLOAD_TOO_LARGE", `The body is larger than ${maxBytes} bytes.`, { maxBytes });
  return async (c, next) => {
    // A route's own, smaller limit read the body already (a workspace push's).
    if (c.req.method === "GET" || c.req.method === "HEAD" || c.get("body") !== undefined) return next();
    const length = c.req.header("content-length");
    if (Number(length) > maxBytes) return refuseBody(c, tooLarge, maxBytes);
    // Tests hand `app.request` a bare `incoming` for its socket's address; only a stream is read.
    const incoming = c.env?.incoming instanceof Readable ? c.env.incoming : undefined;
    // Not `c.req.raw` under Node: making hono's Request would start reading the body into a web stream.
    const raw = incoming ? null : c.req.raw.body;
    const source = incoming ?? (raw ? Readable.fromWeb(raw as NodeReadableStream) : undefined);
    // Node frames a body by Content-Length or chunks (Transfer-Encoding), and a request with neither has none.
    const sized = length !== undefined && /^\d+$/.test(length);
    const unsized = incoming ? c.req.header("transfer-encoding") !== undefined : raw !== null;
    const reserved = inFlight.reserve(c.var.principal, sized ? Number(length) : unsized ? maxBytes : 0);
    if (!reserved.successful) return refuseBody(c, reserved, maxBytes);
    let body: Buffer | typeof TOO_LARGE = Buffer.alloc(0);
    try {
      if (source) body = await readAtMost(source, maxBytes);
    } catch {
      return sendResult(
        c,
        fail("VALIDATION_FAILED", "The request body could not be read to its end.", {
          fields: [{ path: "", message: "could not be read to its end" }],
        }),
      );
    } finally {
      reserved.result();
    }
    if (body === TOO_LARGE) {
      // A Request's body is cancelled; an IncomingMessage's rest is drained by the refusal.
      if (source !== incoming) source?.destroy();
      return refuseBody(c, tooLarge, maxBytes);
    }
    c.set("body", body);
    return next();
  };
}

/** The stream's bytes, or TOO_LARGE (the stream paused) once they pass `maxBytes`. */
function readAtMost(source: Readable, maxBytes: number): Promise<Buffer | typeof TOO_LARGE> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = () =>
      source.off("data", onData).off("end", onEnd).off("error", onError).off("close", onClose);
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
      else {
        settle();
        source.pause();
        resolve(TOO_LARGE);
      }
    };
    const onEnd = () => {
      settle();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      settle();
      reject(error);
    };
    // A stream closed before its end without an error (a client gone mid-body) must not hold its reservation.
    const onClose = () => onError(new Error("closed before its end"));
    source.on("data", onData).on("end", onEnd).on("error", onError).on("close", onClose);
  });
}
