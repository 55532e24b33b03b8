import {
  type InvokeResult,
  ok,
  type PutWorkspaceDocumentsRequest,
  validateDeleteWorkspaceDocumentsRequest,
  validateWorkspaceSearchRequest,
  WORKSPACE_LIMITS,
} from "@aptix/contracts";
import type { WorkspaceKey, WorkspaceKnowledge } from "@aptix/core";
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../app-env.js";
import { notJson, validatedJson } from "../json-body.js";
import { WORKSPACE_PARAMS } from "../openapi/parameters.js";
import { FAILURES, jsonBody, OWNER_ONLY, success } from "../openapi/responses.js";
import { sendResult } from "../send-result.js";

type Validator<T> = (input: unknown) => InvokeResult<T>;
/** Parses and validates a JSON body's bytes. */
type BodyReader<T> = (body: Uint8Array) => Promise<InvokeResult<T>>;

/** Reads a push's body as `readPushBody` does; the server runs it in its worker threads. */
export type PushReader = BodyReader<PutWorkspaceDocumentsRequest>;

const workspaceRoute = {
  tags: ["Workspaces"],
  security: OWNER_ONLY,
  request: { params: WORKSPACE_PARAMS },
};

const putDocuments = createRoute({
  ...workspaceRoute,
  method: "put",
  path: "/v1/workspaces/{workspaceId}/documents",
  operationId: "putWorkspaceDocuments",
  summary: "Push documents into a workspace",
  description:
    "Upserts by path into the workspace's index, created when missing: a document whose content is unchanged " +
    "is not chunked or embedded again; `replace: true` also deletes the workspace's documents not in the set. " +
    `At most ${WORKSPACE_LIMITS.maxDocumentBytes} bytes (UTF-8) a document and ` +
    `${WORKSPACE_LIMITS.maxDocumentsPerRequest} documents a request; paths follow the artifact path rules. Bad ` +
    "input is 400 VALIDATION_FAILED naming the field, and changes nothing.",
  request: {
    ...workspaceRoute.request,
    body: jsonBody("PutWorkspaceDocumentsRequest", {
      documents: [
        { path: "src/build.ts", contents: "export const target = 'es2022';", tags: ["build"] },
        { path: "README.md", contents: "# Acme web\n", metadata: { team: "web" } },
      ],
      replace: false,
    }),
  },
  responses: {
    200: success("PutWorkspaceDocuments", "What the push did and the workspace's chunk total.", {
      workspaceId: "acme-web",
      upserted: 1,
      unchanged: 1,
      deleted: 0,
      chunks: 14,
    }),
    ...FAILURES,
  },
});

const deleteDocuments = createRoute({
  ...workspaceRoute,
  method: "delete",
  path: "/v1/workspaces/{workspaceId}/documents",
  operationId: "deleteWorkspaceDocuments",
  summary: "Delete documents from a workspace",
  description:
    "Deletes the documents of these paths and their chunks; a path the workspace lacks is skipped.",
  request: {
    ...workspaceRoute.request,
    body: jsonBody("DeleteWorkspaceDocumentsRequest", { paths: ["src/build.ts"] }),
  },
  responses: {
    200: success("DeleteWorkspaceDocuments", "How many documents were deleted.", { deleted: 1 }),
    ...FAILURES,
  },
});

const searchWorkspace = createRoute({
  ...workspaceRoute,
  method: "post",
  path: "/v1/workspaces/{workspaceId}/search",
  operationId: "searchWorkspace",
  summary: "Search a workspace",
  description:
    "Ranked chunks, best first: lexical ranking over code-aware terms, fused with vector similarity when the " +
    "server embeds chunks. `ragScope` filters as a user turn's does. An unknown workspace, or another " +
    "principal's, is 404 WORKSPACE_NOT_FOUND.",
  request: {
    ...workspaceRoute.request,
    body: jsonBody("WorkspaceSearchRequest", {
      query: "build target",
      ragScope: [{ key: "language", operator: "==", values: ["typescript"] }],
      limit: 5,
    }),
  },
  responses: {
    200: success("WorkspaceSearch", "The chunks found.", {
      chunks: [
        {
          id: "chunk_5d1e",
          path: "src/build.ts",
          startLine: 1,
          endLine: 1,
          language: "typescript",
          text: "export const target = 'es2022';",
          score: 0.82,
        },
      ],
    }),
    ...FAILURES,
  },
});

const getWorkspace = createRoute({
  ...workspaceRoute,
  method: "get",
  path: "/v1/workspaces/{workspaceId}",
  operationId: "getWorkspace",
  summary: "Get a workspace",
  description: "The workspace's document and chunk counts.",
  responses: {
    200: success("WorkspaceSummary", "The summary.", {
      workspaceId: "acme-web",
      documents: 2,
      chunks: 14,
      updatedAt: "2026-03-02T09:15:00.000Z",
    }),
    ...FAILURES,
  },
});

const dropWorkspace = createRoute({
  ...workspaceRoute,
  method: "delete",
  path: "/v1/workspaces/{workspaceId}",
  operationId: "dropWorkspace",
  summary: "Drop a workspace",
  description: "Deletes the workspace and its whole index.",
  responses: { 200: success("DropWorkspace", "Dropped.", { workspaceId: "acme-web" }), ...FAILURES },
});

/**
 * The workspace routes (docs/http-api.md, Workspaces): documents pushed into the caller's index, searched and
 * dropped. Workspaces are the principal's own, as sessions are: another principal's answers exactly as an unknown
 * one (404 WORKSPACE_NOT_FOUND), as does an id that breaks the rule for one, on every route but
 * `PUT …/documents`, which creates it (and refuses such an id). Bad input is refused with VALIDATION_FAILED
 * naming the field before anything changes. `readPush` reads a push's body (`readPushBody`).
 */
export function workspaceRoutes(
  app: OpenAPIHono<AppEnv>,
  knowledge: WorkspaceKnowledge,
  readPush: PushReader,
): void {
  app.openapi(putDocuments, async (c) =>
    withBody(c, readPush, async (key, body) =>
      knowledge.upsert({ ...key, documents: body.documents, replace: body.replace ?? false }),
    ),
  );
  app.openapi(deleteDocuments, async (c) =>
    withBody(c, inProcess(validateDeleteWorkspaceDocumentsRequest), (key, body) =>
      knowledge.removeDocuments(key, body.paths),
    ),
  );
  app.openapi(searchWorkspace, async (c) =>
    withBody(c, inProcess(validateWorkspaceSearchRequest), async (key, body) => {
      const found = await knowledge.search({ ...key, ...body });
      return found.successful ? ok({ chunks: found.result }) : found;
    }),
  );
  app.openapi(getWorkspace, async (c) => sendResult(c, await knowledge.get(workspaceKey(c))));
  app.openapi(dropWorkspace, async (c) => sendResult(c, await knowledge.drop(workspaceKey(c))));
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
