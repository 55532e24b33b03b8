import { IncomingMessage, ServerResponse } from "node:http";
import type { InvokeFailure } from "@aptix/contracts";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { Context } from "hono";
import type { StatusCode } from "hono/utils/http-status";
import type { AppEnv } from "../app-env.js";
import { sendResult } from "../send-result.js";

/** How long a refused connection is held open, at most, for its client to read the answer. */
const DRAIN_MS = 5_000;

/**
 * Answers `refusal` to a request whose body was not read, or not to its end (refused by its Content-Length, by
 * the bodies in flight, or past the limit as it streamed in), so that the client reads the answer: with
 * `Connection: close`, and under Node the body's rest is read and dropped, `drainBytes` of it at most, until it
 * ends, the client closes, or 5 s pass; only then does the answer end and Node close the connection. Closing on
 * an unread body resets the connection, and a client still writing it meets EPIPE, often before it has read the
 * answer (Node's `http` client then loses it). So the answer is written whole at once, and only its end (which
 * closes) waits: a client that stops sending on an answer (fetch does) closes first; past `drainBytes` nothing
 * more is read, so TCP holds back one that sends on (Node's `http`) while it reads the answer. Unread, its close
 * goes unseen too: such a connection is held the whole 5 s.
 */
export async function refuseBody(
  c: Context<AppEnv>,
  refusal: InvokeFailure,
  drainBytes: number,
): Promise<Response> {
  c.header("Connection", "close");
  const answer = sendResult(c, refusal);
  const { incoming, outgoing } = c.env ?? {};
  // In tests `app.request` has no Node response; there a refused Request's body is cancelled by its reader.
  if (!(incoming instanceof IncomingMessage && outgoing instanceof ServerResponse)) return answer;
  const body = Buffer.from(await answer.arrayBuffer());
  outgoing.writeHead(answer.status, {
    ...Object.fromEntries(answer.headers),
    "content-length": String(body.length),
  });
  outgoing.write(body);
  drain(incoming, drainBytes, () => {
    if (!outgoing.writableEnded) outgoing.end();
  });
  // hono leaves the answer to what was written; the middleware after it (logs, metrics) read this one's status.
  return c.newResponse(null, {
    status: answer.status as StatusCode,
    headers: RESPONSE_ALREADY_SENT.headers,
  });
}

/**
 * Reads and drops `incoming`'s bytes, `maxBytes` of them at most, then `done` at its end, its close or after 5 s,
 * whichever comes first.
 */
function drain(incoming: IncomingMessage, maxBytes: number, done: () => void): void {
  if (incoming.readableEnded) {
    done();
    return;
  }
  let read = 0;
  const stop = () => {
    clearTimeout(timer);
    incoming.off("data", onData).off("end", stop).off("error", stop).off("close", stop);
    done();
  };
  const onData = (chunk: Buffer) => {
    read += chunk.length;
    if (read < maxBytes) return;
    incoming.off("data", onData);
    incoming.pause();
  };
  const timer = setTimeout(stop, DRAIN_MS);
  incoming.on("data", onData).on("end", stop).on("error", stop).on("close", stop);
  incoming.resume();
}
