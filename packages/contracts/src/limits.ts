/**
 * Size limits a request must respect. Clients get these defaults; a server may pass its own
 * (see `createAgentExecuteRequestSchema`) and should publish them to its clients.
 */
export interface RequestLimits {
  /** Characters in `instruction`. */
  maxInstructionChars: number;
  /** Entries in `inputArtifacts`. */
  maxInputArtifacts: number;
  /** Bytes of one artifact: UTF-8 bytes for `utf8`, decoded bytes for `base64`. */
  maxArtifactBytes: number;
  /** Bytes of all artifacts of one request together. */
  maxArtifactTotalBytes: number;
  /** Entries in `clipboardImages`. */
  maxClipboardImages: number;
  /** Decoded bytes of one clipboard image. */
  maxImageBytes: number;
  /** Conditions in `ragScope`. */
  maxRagScopeConditions: number;
  /** Values of one `ragScope` condition. */
  maxRagScopeValues: number;
  /** Characters in `solutionContextText`. */
  maxSolutionContextChars: number;
  /** Entries in `toolResults`. */
  maxToolResults: number;
  /** Characters in one tool result's `resultJson` or `errorMessage`. */
  maxToolResultChars: number;
}

const MiB = 1024 * 1024;

/**
 * The defaults keep the largest request they accept, written as JSON.stringify writes it and every character at
 * its costliest (a control character is 6 bytes, `\u0001`), within the service's 32 MiB body limit: a request
 * the contracts accept never meets 413.
 */
export const DEFAULT_REQUEST_LIMITS: Readonly<RequestLimits> = Object.freeze({
  maxInstructionChars: 100_000,
  maxInputArtifacts: 50,
  maxArtifactBytes: 1 * MiB,
  maxArtifactTotalBytes: 1 * MiB,
  maxClipboardImages: 4,
  maxImageBytes: 4 * MiB,
  maxRagScopeConditions: 32,
  maxRagScopeValues: 16,
  maxSolutionContextChars: 32_000,
  maxToolResults: 20,
  maxToolResultChars: 256 * 1024,
});

/**
 * Lengths the contracts fix for every server, in characters (code points) like the limits above. With
 * `RequestLimits`, they bound every field of a request, and so the size of a whole request body.
 */
export const FIELD_LENGTH_LIMITS = Object.freeze({
  /** Client-minted ids: `sessionId`, `turnId`, image ids, `agentContextId`, `conversationContextId`. */
  maxIdChars: 128,
  /** `toolCallId`s, minted by the LLM provider (`call_…`, `toolu_…`): more room than client ids. */
  maxToolCallIdChars: 256,
  maxRelativePathChars: 1024,
  maxFileNameChars: 255,
  /** An artifact's `mimeType`: RFC 6838 allows 127 characters each for type and subtype. */
  maxMimeTypeChars: 255,
  /** `language`, of the turn and of an artifact. */
  maxLanguageChars: 64,
  maxWorkspaceIdChars: 256,
  maxRepoChars: 512,
  maxRagScopeKeyChars: 128,
  maxRagScopeValueChars: 1024,
} as const);
