import { validateSessionListQuery, validateSessionMessagesQuery } from "@aptix/contracts";
import { type AgentService, isMediaType, OPAQUE_MEDIA_TYPE } from "@aptix/core";
import { create as contentDisposition } from "content-disposition";
import type { Hono } from "hono";
import type { AppEnv } from "../app-env.js";
import { FollowerSlots, MAX_FOLLOWERS_PER_TURN } from "../follower-slots.js";
import { rateLimited } from "../rate-limited.js";
import { sendResult } from "../send-result.js";
import { sendEventStream } from "./event-stream.js";

/** When a follower refused for a full turn may try again: slots free as other followers leave, at no set time. */
const FOLLOWER_RETRY_MS = 5_000;

/** Owner-only reads: another principal's ids answer exactly as unknown ids do (docs/architecture.md). */
export function sessionRoutes(app: Hono<AppEnv>, service: AgentService, heartbeatMs: number): void {
  app.get("/v1/sessions", async (c) => {
    const query = validateSessionListQuery(c.req.query());
    if (!query.successful) return sendResult(c, query);
    return sendResult(c, await service.listSessions(c.get("principal"), query.result));
  });
  app.get("/v1/sessions/:sessionId/messages", async (c) => {
    const query = validateSessionMessagesQuery(c.req.query());
    if (!query.successful) return sendResult(c, query);
    return sendResult(
      c,
      await service.listMessages(c.get("principal"), c.req.param("sessionId"), query.result),
    );
  });
  app.post("/v1/sessions/:sessionId/turns/:turnId/cancel", async (c) =>
    sendResult(
      c,
      await service.cancelTurn(c.get("principal"), c.req.param("sessionId"), c.req.param("turnId")),
    ),
  );
  app.delete("/v1/sessions/:sessionId", async (c) =>
    sendResult(c, await service.deleteSession(c.get("principal"), c.req.param("sessionId"))),
  );
  app.get("/v1/sessions/:sessionId", async (c) =>
    sendResult(c, await service.getSession(c.get("principal"), c.req.param("sessionId"))),
  );
  app.get("/v1/sessions/:sessionId/turns/:turnId/trace", async (c) =>
    sendResult(
      c,
      await service.getTurnTrace(c.get("principal"), c.req.param("sessionId"), c.req.param("turnId")),
    ),
  );
  const followers = new FollowerSlots();
  // A client that dropped off a stream resumes here from Last-Event-ID (the query form serves EventSource polyfills).
  app.get("/v1/sessions/:sessionId/turns/:turnId/events", async (c) => {
    const lastEventId = c.req.header("last-event-id") ?? c.req.query("lastEventId");
    const ids = [c.get("principal"), c.req.param("sessionId"), c.req.param("turnId")] as const;
    const release = followers.take(JSON.stringify(ids));
    if (release === undefined) {
      return sendResult(
        c,
        rateLimited(`This turn already has ${MAX_FOLLOWERS_PER_TURN} followers`, FOLLOWER_RETRY_MS),
      );
    }
    // Following costs polls: it stops once nobody listens (the turn itself goes on regardless).
    const left = new AbortController();
    const followed = await service.followTurn(...ids, lastEventId, left.signal).catch((error: unknown) => {
      release();
      throw error;
    });
    if (!followed.successful) {
      release();
      return sendResult(c, followed);
    }
    return sendEventStream(c, heartbeatMs, async (emit, signal) => {
      // The slot frees as the client leaves, not once the follower's next poll has noticed.
      signal.addEventListener(
        "abort",
        () => {
          left.abort();
          release();
        },
        { once: true },
      );
      try {
        for await (const event of followed.result) emit(event);
      } finally {
        release();
      }
    });
  });
  app.get("/v1/files/:fileId", async (c) => {
    const found = await service.getFile(c.get("principal"), c.req.param("fileId"));
    if (!found.successful) return sendResult(c, found);
    const { file, content } = found.result;
    const etag = `"${file.contentHash}"`;
    const headers = { etag, "cache-control": "private, max-age=0" };
    // The content never changes under an id: a client holding these bytes need not fetch them again.
    if (matchesEtag(c.req.header("if-none-match"), etag)) return c.body(null, 304, headers);
    return c.body(new Uint8Array(content), 200, {
      ...headers,
      // Files kept before media types were checked may hold one that is no valid header value.
      "content-type": isMediaType(file.mimeType) ? file.mimeType : OPAQUE_MEDIA_TYPE,
      "content-length": String(file.sizeBytes),
      // A model's file is never rendered as the service's own page: saved, and its type taken as given.
      "content-disposition": contentDisposition(file.name),
      "x-content-type-options": "nosniff",
    });
  });
}

/** `If-None-Match` (RFC 9110 §13.1.2): `*` or a list of tags, weak ones compared weakly. */
function matchesEtag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(",").some((tag) => {
    const trimmed = tag.trim();
    return trimmed === "*" || trimmed.replace(/^W\//, "") === etag;
  });
}
