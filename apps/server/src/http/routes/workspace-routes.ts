import {
  type InvokeResult,
  ok,
  type PutWorkspaceDocumentsRequest,
  validateDeleteWorkspaceDocumentsRequest,
  validateWorkspaceSearchRequest,
} from "@aptix/contracts";
import type { WorkspaceKey, WorkspaceKnowledge } from "@aptix/core";
import type { Context, Hono } from "hono";
import type { AppEnv } from "../app-env.js";
import { notJson, validatedJson } from "../json-body.js";
import { sendResult } from "../send-result.js";

type Validator<T> = (input: unknown) => InvokeResult<T>;
/** Parses and validates a JSON body's bytes. */
type BodyReader<T> = (body: Uint8Array) => Promise<InvokeResult<T>>;

/** Reads a push's body as `readPushBody` does; the server runs it in its worker threads. */
export type PushReader = BodyReader<PutWorkspaceDocumentsRequest>;

/**
 * The workspace routes (docs/http-api.md, Workspaces): documents pushed into the caller's index, searched and
 * dropped. Workspaces are the principal's own, as sessions are: another principal's answers exactly as an unknown
 * one (404 WORKSPACE_NOT_FOUND), as does an id that breaks the rule for one, on every route but
 * `PUT …/documents`, which creates it (and refuses such an id). Bad input is refused with VALIDATION_FAILED
 * naming the field before anything changes. `readPush` reads a push's body (`readPushBody`).
 */
export function workspaceRoutes(
  app: Hono<AppEnv>,
  knowledge: WorkspaceKnowledge,
  readPush: PushReader,
): void {
  app.put("/v1/workspaces/:workspaceId/documents", async (c) =>
    withBody(c, readPush, async (key, body) =>
      knowledge.upsert({ ...key, documents: body.documents, replace: body.replace ?? false }),
    ),
  );
  app.delete("/v1/workspaces/:workspaceId/documents", async (c) =>
    withBody(c, inProcess(validateDeleteWorkspaceDocumentsRequest), (key, body) =>
      knowledge.removeDocuments(key, body.paths),
    ),
  );
  app.post("/v1/workspaces/:workspaceId/search", async (c) =>
    withBody(c, inProcess(validateWorkspaceSearchRequest), async (key, body) => {
      const found = await knowledge.search({ ...key, ...body });
      return found.successful ? ok({ chunks: found.result }) : found;
    }),
  );
  app.get("/v1/workspaces/:workspaceId", async (c) => sendResult(c, await knowledge.get(workspaceKey(c))));
  app.delete("/v1/workspaces/:workspaceId", async (c) =>
    sendResult(c, await knowledge.drop(workspaceKey(c))),
  );
}

/**
 * The caller's workspace named by the path, as sent: `WorkspaceKnowledge` answers an id that breaks the rule
 * for one as unknown (404), and refuses it for a push (400 naming `workspaceId`).
 */
function workspaceKey(c: Context<AppEnv>): WorkspaceKey {
  return { principal: c.get("principal"), workspaceId: c.req.param("workspaceId") ?? "" };
}

/** Parses the body and validates it on the event loop: for the small bodies of the other routes. */
function inProcess<T>(validate: Validator<T>): BodyReader<T> {
  return async (body) => validatedJson(body, validate);
}

/** Runs `act` once the JSON body is valid; answers its failure otherwise. */
async function withBody<T, R>(
  c: Context<AppEnv>,
  read: BodyReader<T>,
  act: (key: WorkspaceKey, body: T) => Promise<InvokeResult<R>>,
): Promise<Response> {
  const refused = notJson(c);
  if (refused) return sendResult(c, refused);
  const request = await read(c.get("body"));
  if (!request.successful) return sendResult(c, request);
  return sendResult(c, await act(workspaceKey(c), request.result));
}
