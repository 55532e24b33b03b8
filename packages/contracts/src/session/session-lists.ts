import { z } from "zod";
import { FileRefSchema } from "../response/file-ref.js";
import { queryValidator } from "../validation/query-validator.js";
import { WorkspaceIdSchema } from "../workspace/workspace-requests.js";
import { TURN_STATUSES } from "./session-views.js";

/** The most sessions or messages one page holds, and how many when the request names no `limit`. */
export const SESSION_PAGE_LIMITS = { max: 100, default: 20 } as const;

/** How many UTF-16 code units of a session's first instruction make its `title`. */
export const SESSION_TITLE_LENGTH = 80;

const pageQuery = {
  limit: z
    .string()
    .regex(/^\d{1,3}$/, `must be a whole number from 1 to ${SESSION_PAGE_LIMITS.max}`)
    .transform(Number)
    .pipe(z.int().min(1).max(SESSION_PAGE_LIMITS.max))
    .default(SESSION_PAGE_LIMITS.default),
  cursor: z.string().min(1).max(1_000).optional(),
};

/** The query of `GET /v1/sessions`, as strings from a URL. */
export const SessionListQuerySchema = z.strictObject({
  ...pageQuery,
  workspaceId: WorkspaceIdSchema.optional(),
  /** Only the sessions whose `title` holds this, ignoring case; a longer text than a title is no title's. */
  q: z.string().min(1).max(SESSION_TITLE_LENGTH).optional(),
});
/** The query of `GET /v1/sessions/:sessionId/messages`. */
export const SessionMessagesQuerySchema = z.strictObject({
  ...pageQuery,
  /** `superseded`: the turns a rewind went back before are shown too. */
  include: z.literal("superseded").optional(),
});

export const validateSessionListQuery = queryValidator(SessionListQuerySchema);
export const validateSessionMessagesQuery = queryValidator(SessionMessagesQuerySchema);

/**
 * The session list and message views (`GET /v1/sessions`, `GET /v1/sessions/:sessionId/messages`) and the
 * answers of delete and cancel, built once over how a timestamp is held: a `Date` in the service, an ISO 8601
 * string on the wire.
 */
function sessionListSchemas<T extends z.ZodType>(timestamp: T) {
  const sessionListItem = z.strictObject({
    sessionId: z.string(),
    modeDisplayName: z.string(),
    turnCount: z.int().min(0),
    /** Absent before the session's first turn is stored (never, as served). */
    lastTurnStatus: z.enum(TURN_STATUSES).optional(),
    /** The workspace the session's latest turn named. */
    workspaceId: z.string().optional(),
    createdAt: timestamp,
    updatedAt: timestamp,
    /** The first user instruction's first 80 UTF-16 code units, trailing white space trimmed; "" without one. */
    title: z.string(),
  });
  const sessionList = z.strictObject({
    sessions: z.array(sessionListItem),
    /** Pass as `cursor` for the next page; absent on the last one. */
    nextCursor: z.string().optional(),
  });
  const sessionMessage = z.strictObject({
    turnId: z.string(),
    role: z.enum(["user", "assistant"]),
    /** The instruction as sent, or the answer; absent on an assistant message with `error`. */
    text: z.string().optional(),
    /** Every client and server tool call of the turn, in order (assistant messages). */
    toolCalls: z
      .array(
        z.strictObject({
          name: z.string(),
          argumentsJson: z.string(),
          resultJson: z.string().optional(),
          errorMessage: z.string().optional(),
        }),
      )
      .optional(),
    files: z.array(FileRefSchema).optional(),
    /** Why a failed or cancelled turn has no answer. */
    error: z.strictObject({ code: z.string(), message: z.string() }).optional(),
    createdAt: timestamp,
  });
  const sessionMessages = z.strictObject({
    messages: z.array(sessionMessage),
    nextCursor: z.string().optional(),
  });
  return { sessionListItem, sessionList, sessionMessage, sessionMessages };
}

const onTheWire = sessionListSchemas(z.iso.datetime());
const inTheService = sessionListSchemas(z.date());

/** `GET /v1/sessions`: the principal's sessions, most recently active first. */
export const SessionListSchema = onTheWire.sessionList;
/** `GET /v1/sessions/:sessionId/messages`: the conversation as a UI shows it, oldest first. */
export const SessionMessagesSchema = onTheWire.sessionMessages;
/** `DELETE /v1/sessions/:sessionId`. */
export const SessionDeletedSchema = z.strictObject({ deleted: z.literal(true) });

/**
 * What `POST /v1/sessions/:sessionId/compact` answers: the conversation compacted, with the estimates of the next
 * call before and after (tokens), or nothing to compact (no turn since the latest compaction).
 */
export const SessionCompactedSchema = z.discriminatedUnion("compacted", [
  z.strictObject({
    compacted: z.literal(true),
    tokensBefore: z.int().min(0),
    tokensAfter: z.int().min(0),
  }),
  z.strictObject({ compacted: z.literal(false) }),
]);

export type SessionListItem = z.output<typeof inTheService.sessionListItem>;
export type SessionList = z.output<typeof inTheService.sessionList>;
export type SessionMessage = z.output<typeof inTheService.sessionMessage>;
export type SessionMessages = z.output<typeof inTheService.sessionMessages>;
export type SessionDeleted = z.output<typeof SessionDeletedSchema>;
export type SessionCompacted = z.output<typeof SessionCompactedSchema>;
