import { z } from "zod";

/** `PUT …/documents`: what the call did, and the workspace's chunk total after it. */
export const PutWorkspaceDocumentsResponseSchema = z.strictObject({
  workspaceId: z.string(),
  /** Documents created or changed (re-chunked). */
  upserted: z.int().min(0),
  /** Documents whose content hash was unchanged: nothing was re-chunked or re-embedded. */
  unchanged: z.int().min(0),
  /** Documents deleted because `replace` was true and they were not in the set. */
  deleted: z.int().min(0),
  chunks: z.int().min(0),
});

/** `DELETE …/documents`. */
export const DeleteWorkspaceDocumentsResponseSchema = z.strictObject({ deleted: z.int().min(0) });

/** `DELETE /v1/workspaces/:workspaceId`: the workspace and its index are gone. */
export const DropWorkspaceResponseSchema = z.strictObject({ workspaceId: z.string() });

function workspaceSummarySchema<T extends z.ZodType>(timestamp: T) {
  return z.strictObject({
    workspaceId: z.string(),
    documents: z.int().min(0),
    chunks: z.int().min(0),
    updatedAt: timestamp,
  });
}

/** `GET /v1/workspaces/:workspaceId`; `updatedAt` as ISO 8601. */
export const WorkspaceSummarySchema = workspaceSummarySchema(z.iso.datetime());

/** One ranked chunk: lines are 1-based and inclusive; higher scores rank first. */
export const WorkspaceSearchChunkSchema = z.strictObject({
  id: z.string(),
  path: z.string(),
  startLine: z.int().min(1),
  endLine: z.int().min(1),
  language: z.string(),
  text: z.string(),
  score: z.number(),
});

/** `POST …/search`: best first. */
export const WorkspaceSearchResponseSchema = z.strictObject({ chunks: z.array(WorkspaceSearchChunkSchema) });

export type PutWorkspaceDocumentsResponse = z.output<typeof PutWorkspaceDocumentsResponseSchema>;
export type DeleteWorkspaceDocumentsResponse = z.output<typeof DeleteWorkspaceDocumentsResponseSchema>;
export type DropWorkspaceResponse = z.output<typeof DropWorkspaceResponseSchema>;
/** As the service holds it, with a `Date`. */
export type WorkspaceSummary = z.output<ReturnType<typeof workspaceSummarySchema<z.ZodDate>>>;
export type WorkspaceSearchChunk = z.output<typeof WorkspaceSearchChunkSchema>;
export type WorkspaceSearchResponse = z.output<typeof WorkspaceSearchResponseSchema>;
