import { z } from "zod";
import { DEFAULT_REQUEST_LIMITS, FIELD_LENGTH_LIMITS } from "../limits.js";
import { ragScopeConditionSchema } from "../request/rag-scope-condition.js";
import { fail, type InvokeResult, ok } from "../result/invoke-result.js";
import { RelativePathSchema } from "../text/relative-path.js";
import { freeText } from "../text/storable-text.js";
import { utf8ByteLength } from "../text/utf8-byte-length.js";
import { contractErrorMessages } from "../validation/error-messages.js";
import { reportFieldErrors } from "../validation/to-field-errors.js";
import { WORKSPACE_LIMITS } from "./workspace-limits.js";

const {
  maxDocumentBytes,
  maxDocumentsPerRequest,
  maxTagsPerDocument,
  maxTagChars,
  maxMetadataEntries,
  maxMetadataKeyChars,
  maxMetadataValueChars,
  maxQueryChars,
  defaultSearchLimit,
  maxSearchLimit,
} = WORKSPACE_LIMITS;

/** The `:workspaceId` of the workspace routes: the same text a user turn's `workspaceId` may hold. */
export const WorkspaceIdSchema = freeText({ maxChars: FIELD_LENGTH_LIMITS.maxWorkspaceIdChars });

/** Paths of one request must differ: each repeat is reported where it repeats. */
function uniquePaths<T>(pathOf: (entry: T) => string, at: (index: number) => PropertyKey[]) {
  return (entries: readonly T[], ctx: z.RefinementCtx) => {
    const first = new Map<string, number>();
    entries.forEach((entry, index) => {
      const seen = first.get(pathOf(entry));
      if (seen === undefined) first.set(pathOf(entry), index);
      else
        ctx.addIssue({
          code: "custom",
          path: at(index),
          message: `must be unique: entry ${seen} has the same path`,
        });
    });
  };
}

/** One file of the workspace as the client has it; `path` follows the artifact path rules (AGN-034 §4.2). */
export const WorkspaceDocumentSchema = z.strictObject({
  path: RelativePathSchema,
  contents: freeText({ empty: true }).refine((contents) => utf8ByteLength(contents) <= maxDocumentBytes, {
    message: `must be at most ${maxDocumentBytes} bytes (UTF-8)`,
    abort: true,
  }),
  /** The language of every chunk; from the path's extension when absent. */
  language: freeText({ maxChars: FIELD_LENGTH_LIMITS.maxLanguageChars }).optional(),
  repo: freeText({ maxChars: FIELD_LENGTH_LIMITS.maxRepoChars }).optional(),
  tags: z
    .array(freeText({ maxChars: maxTagChars }))
    .max(maxTagsPerDocument, `must hold at most ${maxTagsPerDocument} tags`)
    .optional(),
  /** Further attributes `ragScope` can test, by key. */
  metadata: z
    .record(
      freeText({ maxChars: maxMetadataKeyChars }),
      freeText({ maxChars: maxMetadataValueChars, empty: true }),
    )
    .refine((metadata) => Object.keys(metadata).length <= maxMetadataEntries, {
      message: `must hold at most ${maxMetadataEntries} entries`,
    })
    .optional(),
});

/** `PUT /v1/workspaces/:workspaceId/documents`. */
export const PutWorkspaceDocumentsRequestSchema = z.strictObject({
  documents: z
    .array(WorkspaceDocumentSchema)
    .max(maxDocumentsPerRequest, `must hold at most ${maxDocumentsPerRequest} documents`)
    .superRefine(
      uniquePaths<{ path: string }>(
        (document) => document.path,
        (index) => [index, "path"],
      ),
    ),
  /** Also delete the workspace's documents whose path is not in `documents`. */
  replace: z.boolean().optional(),
});

/** `DELETE /v1/workspaces/:workspaceId/documents`. */
export const DeleteWorkspaceDocumentsRequestSchema = z.strictObject({
  paths: z
    .array(RelativePathSchema)
    .min(1, "must name at least one path")
    .max(maxDocumentsPerRequest, `must hold at most ${maxDocumentsPerRequest} paths`),
});

/** `POST /v1/workspaces/:workspaceId/search`. */
export const WorkspaceSearchRequestSchema = z.strictObject({
  query: freeText({ maxChars: maxQueryChars }).regex(/\S/, "must contain some non-whitespace text"),
  /** ANDed conditions, as a user turn's `ragScope` (AGN-034 §4.4). */
  ragScope: z
    .array(ragScopeConditionSchema(DEFAULT_REQUEST_LIMITS))
    .max(
      DEFAULT_REQUEST_LIMITS.maxRagScopeConditions,
      `must hold at most ${DEFAULT_REQUEST_LIMITS.maxRagScopeConditions} conditions`,
    )
    .optional(),
  limit: z.int().min(1).max(maxSearchLimit).default(defaultSearchLimit),
});

export type WorkspaceDocument = z.output<typeof WorkspaceDocumentSchema>;
export type PutWorkspaceDocumentsRequest = z.output<typeof PutWorkspaceDocumentsRequestSchema>;
export type DeleteWorkspaceDocumentsRequest = z.output<typeof DeleteWorkspaceDocumentsRequestSchema>;
/** As a client writes it: `limit` may be left out. */
export type WorkspaceSearchRequest = z.input<typeof WorkspaceSearchRequestSchema>;

/**
 * A validator answering an InvokeResult: the parsed body, or VALIDATION_FAILED whose `details.fields` names
 * every failing field by path. `subject` names the body in the message. It never throws.
 */
export function bodyValidator<S extends z.ZodType>(schema: S, subject: string) {
  return (input: unknown): InvokeResult<z.output<S>> => {
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      const fields = [{ path: "", message: "must be a JSON object" }];
      return fail("VALIDATION_FAILED", `The ${subject} must be a JSON object.`, { fields });
    }
    const parsed = schema.safeParse(input, { error: contractErrorMessages });
    if (parsed.success) return ok(parsed.data);
    const { fields, summary } = reportFieldErrors(
      subject,
      parsed.error.issues,
      () => `is not a field of the ${subject}`,
    );
    return fail("VALIDATION_FAILED", `Invalid ${subject}: ${summary}.`, {
      fields,
    });
  };
}

const validatePutDocuments = bodyValidator(PutWorkspaceDocumentsRequestSchema, "documents request");

/**
 * A push of more than `maxDocumentsPerRequest` documents is PAYLOAD_TOO_LARGE (413), told before any document
 * is judged: the client should split it, not fix it.
 */
export function validatePutWorkspaceDocumentsRequest(
  input: unknown,
): InvokeResult<PutWorkspaceDocumentsRequest> {
  const documents =
    typeof input === "object" && input !== null ? (input as { documents?: unknown }).documents : [];
  if (Array.isArray(documents) && documents.length > maxDocumentsPerRequest) {
    return fail(
      "PAYLOAD_TOO_LARGE",
      `A push holds at most ${maxDocumentsPerRequest} documents, not ${documents.length}: send them in several requests.`,
      {
        maxDocuments: maxDocumentsPerRequest,
        fields: [{ path: "documents", message: `must hold at most ${maxDocumentsPerRequest} documents` }],
      },
    );
  }
  return validatePutDocuments(input);
}
export const validateDeleteWorkspaceDocumentsRequest = bodyValidator(
  DeleteWorkspaceDocumentsRequestSchema,
  "delete request",
);
export const validateWorkspaceSearchRequest = bodyValidator(WorkspaceSearchRequestSchema, "search request");

/** The `:workspaceId` of a workspace route, judged as the field `workspaceId`. */
export function validateWorkspaceId(input: string): InvokeResult<string> {
  const parsed = WorkspaceIdSchema.safeParse(input, { error: contractErrorMessages });
  if (parsed.success) return ok(parsed.data);
  const fields = reportFieldErrors("workspaceId", parsed.error.issues, () => "").fields.map((field) => ({
    ...field,
    path: "workspaceId",
  }));
  return fail(
    "VALIDATION_FAILED",
    `Invalid workspaceId: ${fields.map((field) => field.message).join("; ")}.`,
    {
      fields,
    },
  );
}
