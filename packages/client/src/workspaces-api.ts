import type {
  DeleteWorkspaceDocumentsResponse,
  DropWorkspaceResponse,
  PutWorkspaceDocumentsResponse,
  WorkspaceDocument,
  WorkspaceSearchRequest,
  WorkspaceSearchResponse,
} from "@aptix/contracts";
import type { CallOptions } from "./aptix-client.js";
import type { AptixResult } from "./aptix-result.js";
import type { HttpTransport } from "./http-transport.js";
import { callJson } from "./json-call.js";
import {
  readDeleteDocumentsResult,
  readDropWorkspaceResult,
  readPutDocumentsResult,
  readSearchResult,
  readWorkspaceResult,
  type WorkspaceSummaryJson,
} from "./lenient-schemas.js";

/** What `workspaces.upsert` sends: at most 1,000 documents of at most 1 MiB each, 16 MiB in all (`WORKSPACE_LIMITS`). */
export interface WorkspaceUpsert {
  documents: readonly WorkspaceDocument[];
  /** Also delete the workspace's documents whose path is not in `documents` (a full push). */
  replace?: boolean;
}

/**
 * The routes of a principal's workspace index (`/v1/workspaces/:workspaceId`). Every route but `upsert` (which
 * creates the workspace) answers `WORKSPACE_NOT_FOUND` for a workspace the principal has not pushed.
 */
export interface WorkspacesApi {
  /** `PUT …/documents`: adds or replaces documents by path; an unchanged document is not indexed again. */
  upsert(
    workspaceId: string,
    upsert: WorkspaceUpsert,
    options?: CallOptions,
  ): Promise<AptixResult<PutWorkspaceDocumentsResponse>>;
  /** `DELETE …/documents`: deletes the documents with these paths (at least one, at most 1,000). */
  remove(
    workspaceId: string,
    paths: readonly string[],
    options?: CallOptions,
  ): Promise<AptixResult<DeleteWorkspaceDocumentsResponse>>;
  /** `GET /v1/workspaces/:workspaceId`: how many documents and chunks it holds, and when it last changed. */
  get(workspaceId: string, options?: CallOptions): Promise<AptixResult<WorkspaceSummaryJson>>;
  /** `POST …/search`: the best chunks for a query, filtered by `ragScope`, best first. */
  search(
    workspaceId: string,
    search: WorkspaceSearchRequest,
    options?: CallOptions,
  ): Promise<AptixResult<WorkspaceSearchResponse>>;
  /** `DELETE /v1/workspaces/:workspaceId`: drops the workspace and its whole index. */
  drop(workspaceId: string, options?: CallOptions): Promise<AptixResult<DropWorkspaceResponse>>;
}

export function workspacesApi(transport: HttpTransport): WorkspacesApi {
  const at = (workspaceId: string, rest = "") => `/v1/workspaces/${encodeURIComponent(workspaceId)}${rest}`;
  return {
    upsert: (workspaceId, upsert, options = {}) =>
      callJson(transport, "PUT", at(workspaceId, "/documents"), readPutDocumentsResult, {
        body: upsert,
        signal: options.signal,
      }),
    remove: (workspaceId, paths, options = {}) =>
      callJson(transport, "DELETE", at(workspaceId, "/documents"), readDeleteDocumentsResult, {
        body: { paths },
        signal: options.signal,
      }),
    get: (workspaceId, options = {}) =>
      callJson(transport, "GET", at(workspaceId), readWorkspaceResult, { signal: options.signal }),
    search: (workspaceId, search, options = {}) =>
      callJson(transport, "POST", at(workspaceId, "/search"), readSearchResult, {
        body: search,
        signal: options.signal,
      }),
    drop: (workspaceId, options = {}) =>
      callJson(transport, "DELETE", at(workspaceId), readDropWorkspaceResult, { signal: options.signal }),
  };
}
