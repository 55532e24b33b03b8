import { z } from "zod";
import { FIELD_LENGTH_LIMITS, type RequestLimits } from "../limits.js";
import { IdentifierSchema } from "../text/identifier.js";
import { freeText } from "../text/storable-text.js";
import { utf8ByteLength } from "../text/utf8-byte-length.js";
import { uniqueIds } from "../validation/unique-ids.js";
import { clipboardImageSchema } from "./clipboard-image.js";
import { inputArtifactSchema } from "./input-artifact.js";
import { ragScopeConditionSchema } from "./rag-scope-condition.js";

/** The fields that carry user input; a user turn needs at least one of them (AGN-034 §2.1). */
export const USER_TURN_INPUT_FIELDS = ["instruction", "inputArtifacts", "clipboardImages"] as const;

/** What a user turn does when its session's turn is running or awaiting client tools. */
export const MULTITASK_STRATEGIES = ["reject", "enqueue", "interrupt"] as const;

/** A new agent turn (AGN-034 §2.1). Mode, provider ids and tool definitions are server-owned and refused. */
export function userTurnRequestSchema(limits: RequestLimits) {
  const { maxWorkspaceIdChars, maxRepoChars, maxLanguageChars } = FIELD_LENGTH_LIMITS;
  return z
    .strictObject({
      sessionId: IdentifierSchema,
      turnId: IdentifierSchema,
      instruction: freeText({ maxChars: limits.maxInstructionChars, empty: true })
        .regex(/\S/, "must contain some non-whitespace text")
        .optional(),
      inputArtifacts: z
        .array(inputArtifactSchema(limits))
        .max(limits.maxInputArtifacts, `must hold at most ${limits.maxInputArtifacts} artifacts`)
        .optional(),
      clipboardImages: z
        .array(clipboardImageSchema(limits))
        .max(limits.maxClipboardImages, `must hold at most ${limits.maxClipboardImages} images`)
        .superRefine(uniqueIds("clipboardImages", "id"))
        .optional(),
      ragScope: z
        .array(ragScopeConditionSchema(limits))
        .max(limits.maxRagScopeConditions, `must hold at most ${limits.maxRagScopeConditions} conditions`)
        .optional(),
      /** Session-latched (AGN-034 §4.5): a value replaces the stored one, `""` clears it, absence keeps it. */
      solutionContextText: freeText({ maxChars: limits.maxSolutionContextChars, empty: true }).optional(),
      workspaceId: freeText({ maxChars: maxWorkspaceIdChars }).optional(),
      repo: freeText({ maxChars: maxRepoChars }).optional(),
      language: freeText({ maxChars: maxLanguageChars }).optional(),
      stream: z.boolean().optional(),
      /** Answered 202 at once; the turn runs with no client waiting (`GET …/turns/:turnId` reads it). Not with `stream`. */
      background: z.boolean().optional(),
      /**
       * What the turn does when its session's turn is running or awaiting client tools: `reject` (the default)
       * refuses it SESSION_BUSY; `enqueue` queues it behind that turn; `interrupt` cancels that turn and runs this one.
       */
      multitask: z.enum(MULTITASK_STRATEGIES).optional(),
      agentContextId: IdentifierSchema.optional(),
      conversationContextId: IdentifierSchema.optional(),
    })
    .superRefine((request, ctx) => {
      const hasInput =
        request.instruction !== undefined ||
        (request.inputArtifacts?.length ?? 0) > 0 ||
        (request.clipboardImages?.length ?? 0) > 0;
      if (request.background === true && request.stream === true) {
        ctx.addIssue({
          code: "custom",
          path: ["background"],
          message: "a background turn has no client waiting for it, so it cannot stream: leave out stream",
        });
      }
      if (!hasInput) {
        ctx.addIssue({
          code: "custom",
          path: [],
          message: "a user turn needs at least one of instruction, inputArtifacts or clipboardImages",
        });
      }
      const totalBytes = (request.inputArtifacts ?? []).reduce(
        (sum, artifact) =>
          sum +
          // Base64 counts whole 3-byte quanta, the same rounding the per-artifact cap uses.
          (artifact.encoding === "base64"
            ? (artifact.contents.length / 4) * 3
            : utf8ByteLength(artifact.contents)),
        0,
      );
      if (totalBytes > limits.maxArtifactTotalBytes) {
        ctx.addIssue({
          code: "custom",
          path: ["inputArtifacts"],
          message: `must hold at most ${limits.maxArtifactTotalBytes} bytes of contents in all`,
        });
      }
    })
    .meta({
      anyOf: [
        { required: ["instruction"] },
        { required: ["inputArtifacts"], properties: { inputArtifacts: { minItems: 1 } } },
        { required: ["clipboardImages"], properties: { clipboardImages: { minItems: 1 } } },
      ],
    });
}

export type UserTurnRequest = z.infer<ReturnType<typeof userTurnRequestSchema>>;
