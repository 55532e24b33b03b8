import {
  CLIPBOARD_IMAGE_MIME_TYPES,
  DEFAULT_REQUEST_LIMITS,
  FIELD_LENGTH_LIMITS,
  MULTITASK_STRATEGIES,
  RAG_SCOPE_OPERATORS,
  type RequestLimits,
} from "@aptix/contracts";

/**
 * A string field at its longest: `count` characters, each `unit`, the character that costs the field most in
 * JSON. JSON.stringify writes it out in full; `jsonByteLength` sizes it without building it.
 */
class Longest {
  constructor(
    readonly count: number,
    readonly unit: string,
  ) {}

  toJSON(): string {
    return this.unit.repeat(this.count);
  }
}

/** The character JSON.stringify writes largest, for each kind of field. */
const COSTLIEST = {
  /** Free text may hold control characters, written `\u0001`: 6 bytes each. */
  text: "\u0001",
  /** Paths refuse control characters: a character beyond the BMP, 4 bytes of UTF-8, is their largest. */
  path: "📄",
  /** Ids, base64 and MIME types are ASCII that JSON writes as it is. */
  ascii: "a",
} as const;

/** The longest number JSON.stringify writes for a non-negative double: 23 characters. */
const LONGEST_NUMBER = 2.2250738585072014e-308;

const times = <T>(count: number, make: (index: number) => T): T[] =>
  Array.from({ length: count }, (_, i) => make(i));
const longestOf = (words: readonly string[]) => words.reduce((a, b) => (b.length > a.length ? b : a));

/**
 * The two largest requests the contracts accept under `limits`: every optional field present, every list
 * full, every string at its longest in its costliest character. Ids that must differ are numbered.
 */
export function largestRequests(limits: RequestLimits = DEFAULT_REQUEST_LIMITS) {
  const fields = FIELD_LENGTH_LIMITS;
  const text = (count: number) => new Longest(count, COSTLIEST.text);
  const id = (maxChars: number, index = 0) => String(index).padStart(maxChars, COSTLIEST.ascii);
  // Contents fill the artifacts in turn, up to the per-artifact and total caps (a control character is 1 byte
  // of UTF-8, 6 in JSON: more than the 4/3 of base64).
  const contentBytes = (index: number) =>
    Math.max(
      0,
      Math.min(limits.maxArtifactBytes, limits.maxArtifactTotalBytes - index * limits.maxArtifactBytes),
    );
  const ids = { sessionId: id(fields.maxIdChars), turnId: id(fields.maxIdChars) };
  const userTurn = {
    ...ids,
    instruction: text(limits.maxInstructionChars),
    inputArtifacts: times(limits.maxInputArtifacts, (index) => ({
      relativePath: new Longest(fields.maxRelativePathChars, COSTLIEST.path),
      fileName: text(fields.maxFileNameChars),
      contents: text(contentBytes(index)),
      origin: "user",
      mimeType: `a/${id(fields.maxMimeTypeChars - 2)}`,
      language: text(fields.maxLanguageChars),
      encoding: "utf8",
    })),
    clipboardImages: times(limits.maxClipboardImages, (index) => ({
      id: id(fields.maxIdChars, index),
      mimeType: longestOf(CLIPBOARD_IMAGE_MIME_TYPES),
      // Base64 takes 4 characters per 3 bytes, padded.
      dataBase64: new Longest(4 * Math.ceil(limits.maxImageBytes / 3), "A"),
    })),
    ragScope: times(limits.maxRagScopeConditions, () => ({
      key: text(fields.maxRagScopeKeyChars),
      operator: longestOf(RAG_SCOPE_OPERATORS),
      values: times(limits.maxRagScopeValues, () => text(fields.maxRagScopeValueChars)),
    })),
    solutionContextText: text(limits.maxSolutionContextChars),
    workspaceId: text(fields.maxWorkspaceIdChars),
    repo: text(fields.maxRepoChars),
    language: text(fields.maxLanguageChars),
    stream: false,
    // Not with stream: true; `false` is the longer of the two.
    background: false,
    multitask: longestOf(MULTITASK_STRATEGIES),
    agentContextId: id(fields.maxIdChars),
    conversationContextId: id(fields.maxIdChars),
  };
  const toolContinuation = {
    ...ids,
    toolResults: times(limits.maxToolResults, (index) => ({
      toolCallId: id(fields.maxToolCallIdChars, index),
      executionMs: LONGEST_NUMBER,
      // Not resultJson: JSON text holds no control characters, so at most 4 bytes a character.
      errorMessage: text(limits.maxToolResultChars),
    })),
  };
  return { userTurn, toolContinuation };
}

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/** Bytes of `JSON.stringify(value)`, with each `Longest` counted rather than written out. */
export function jsonByteLength(value: unknown): number {
  if (value instanceof Longest) return 2 + value.count * (bytesOf(value.unit) - 2);
  // Brackets, then a comma between entries.
  const enclosed = (sizes: number[]) => 2 + Math.max(0, sizes.length - 1) + sum(sizes);
  if (Array.isArray(value)) return enclosed(value.map(jsonByteLength));
  if (typeof value === "object" && value !== null) {
    return enclosed(Object.entries(value).map(([key, entry]) => bytesOf(key) + 1 + jsonByteLength(entry)));
  }
  return bytesOf(value);
}

/**
 * The largest request body the contracts accept under `limits`, in bytes: the larger of the two requests of
 * `largestRequests`, as JSON.stringify writes them (UTF-8, no whitespace, escaping only what JSON requires).
 * The headroom for JSON escaping is in the characters chosen: free text is counted at 6 bytes a character
 * (a control character, `\u0001`), paths at 4, ASCII fields at 1, so no accepted request, written as
 * clients write JSON, ever meets 413. A body larger than this is not one the contracts would accept.
 */
export function maxRequestBodyBytes(limits: RequestLimits = DEFAULT_REQUEST_LIMITS): number {
  const { userTurn, toolContinuation } = largestRequests(limits);
  return Math.max(jsonByteLength(userTurn), jsonByteLength(toolContinuation));
}
