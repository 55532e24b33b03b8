import { IncomingMessage, ServerResponse } from "node:http";
import type { InvokeFailure } from "@aptix/contracts";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { Context } from "hono";
import type { StatusCode } from "hono/utils/http-status";
import type { AppEnv } from "../app-env.js";
import { sendResult } from "../send-result.js";

/** How long a refused body is read and dropped, at most, before its connection closes. */
const DRAIN_MS = 5_000;

/**
 * Answers `refusal` to a request whose body was not read, or not to its end (refused by its Content-Length, by
 * the bodies in flight, or past the limit as it streamed in), so that the client reads the answer: with
 * `Connection: close`, and under Node the body's rest is read and dropped for at most 5 s or `drainBytes` before
 * the answer ends and Node closes the connection. Closing on an unread body resets the connection, and a client
 * still writing it meets EPIPE, often before it has read the answer (Node's `http` client then loses the answer).
 * So the answer is written whole at once, and only its end (which closes) waits for the body: a client that
 * stops sending on an answer (fetch does) closes first, one that sends on (Node's `http`) has read the answer by
 * the time the connection closes under it.
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

/** Reads and drops `incoming`'s bytes until its end, `maxBytes` of them, or 5 s, whichever comes first. */
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
    if (read >= maxBytes) stop();
  };
  const timer = setTimeout(stop, DRAIN_MS);
  incoming.on("data", onData).on("end", stop).on("error", stop).on("close", stop);
  incoming.resume();
}
