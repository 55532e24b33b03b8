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

export const DEFAULT_REQUEST_LIMITS: Readonly<RequestLimits> = Object.freeze({
  maxInstructionChars: 100_000,
  maxInputArtifacts: 50,
  maxArtifactBytes: 2 * MiB,
  maxArtifactTotalBytes: 8 * MiB,
  maxClipboardImages: 10,
  maxImageBytes: 5 * MiB,
  maxRagScopeConditions: 32,
  maxRagScopeValues: 64,
  maxSolutionContextChars: 32_000,
  maxToolResults: 64,
  maxToolResultChars: 1 * MiB,
});
