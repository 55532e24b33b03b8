import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { posix, win32 } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  AgentExecuteResultSchema,
  CLIPBOARD_IMAGE_MIME_TYPES,
  formatFieldPath,
  type InvokeResult,
  RAG_SCOPE_OPERATORS,
  USER_TURN_INPUT_FIELDS,
  validateAgentExecuteRequest,
  validateAgentExecuteResponse,
} from "../src/index.js";
import { LONE_SURROGATE_MESSAGE, NO_NUL_MESSAGE } from "../src/text/storable-text.js";
import { expectValidationFailure } from "./support/expect-failure.js";

/** Free text as clients send it: anything but U+0000, which the contract refuses (Postgres cannot keep it). */
const freeText = (constraints: fc.StringConstraints) =>
  fc.string(constraints).filter((text) => !text.includes("\u0000"));

/** Enough to find the shapes that matter; the whole contracts suite stays well under 20 s on 2 cores. */
const RUNS = { valid: 200, junk: 250 };

// ── arbitraries for valid requests ──────────────────────────────────────────────────────────────────────

const chars = (text: string) => [...text];
const LETTERS = chars("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz");
const DIGITS = chars("0123456789");
const ID_ALPHABET = [...LETTERS, ...DIGITS, ".", "_", ":", "-"];

const id = (maxLength = 128) =>
  fc.string({ unit: fc.constantFrom(...ID_ALPHABET), minLength: 1, maxLength: Math.min(maxLength, 128) });

const toolCallId = fc.oneof(
  id(),
  fc.tuple(fc.constantFrom("call_", "toolu_"), id(200)).map(([prefix, rest]) => prefix + rest),
);

/**
 * Path segments: names with dots, spaces and non-ASCII, never a ':' (no drive letters), and never ending with a
 * dot or a space, which also rules out '.', '..' and segments of dots and spaces only.
 */
const segment = fc
  .string({
    unit: fc.constantFrom(...LETTERS, ...DIGITS, "_", "-", ".", " ", "é", "日", "📄"),
    minLength: 1,
    maxLength: 12,
  })
  .filter((name) => !/[. ]$/.test(name));

const relativePath = fc.array(segment, { minLength: 1, maxLength: 5 }).map((segments) => segments.join("/"));

const mimeToken = fc
  .tuple(
    fc.constantFrom(...LETTERS, ...DIGITS),
    fc.string({ unit: fc.constantFrom(...LETTERS, ...DIGITS, ..."!#$&^_.+-"), maxLength: 12 }),
  )
  .map(([first, rest]) => first + rest);

const mimeType = fc.tuple(mimeToken, mimeToken).map(([type, subtype]) => `${type}/${subtype}`);

const base64 = (minLength: number) =>
  fc.uint8Array({ minLength, maxLength: 96 }).map((bytes) => Buffer.from(bytes).toString("base64"));

/** Non-empty text of one to 64 characters, the limit of the shortest hint. */
const hint = freeText({ unit: "grapheme", minLength: 1, maxLength: 64 });

const artifactFields = {
  relativePath,
  fileName: segment,
  origin: fc.constantFrom("ide", "user"),
  mimeType,
  language: hint,
};
const artifactRequired = ["relativePath", "fileName", "contents", "origin"] as const;

const artifact = fc.oneof(
  fc.record(
    {
      ...artifactFields,
      contents: freeText({ unit: "binary", maxLength: 300 }),
      encoding: fc.constant("utf8"),
    },
    { requiredKeys: [...artifactRequired] },
  ),
  fc.record(
    { ...artifactFields, contents: base64(0), encoding: fc.constant("base64") },
    { requiredKeys: [...artifactRequired, "encoding"] },
  ),
);

const clipboardImages = fc.uniqueArray(
  fc.record({ id: id(), mimeType: fc.constantFrom(...CLIPBOARD_IMAGE_MIME_TYPES), dataBase64: base64(1) }),
  { selector: (image) => image.id, maxLength: 4 },
);

const ragCondition = fc.record({
  key: freeText({ minLength: 1, maxLength: 40 }),
  operator: fc.constantFrom(...RAG_SCOPE_OPERATORS),
  values: fc.array(freeText({ unit: "grapheme", maxLength: 40 }), { minLength: 1, maxLength: 4 }),
});

/** Any text around at least one non-whitespace character. */
const instruction = fc
  .tuple(
    freeText({ unit: "grapheme", maxLength: 80 }),
    fc.constantFrom("a", "Z", "7", "é", "你", "📄", "?", "#"),
    freeText({ unit: "grapheme", maxLength: 80 }),
  )
  .map((parts) => parts.join(""));

const hasInput = (turn: { instruction?: string; inputArtifacts?: unknown[]; clipboardImages?: unknown[] }) =>
  turn.instruction !== undefined ||
  (turn.inputArtifacts?.length ?? 0) > 0 ||
  (turn.clipboardImages?.length ?? 0) > 0;

const userTurn = fc
  .record(
    {
      sessionId: id(),
      turnId: id(),
      instruction,
      inputArtifacts: fc.array(artifact, { maxLength: 3 }),
      clipboardImages,
      ragScope: fc.array(ragCondition, { maxLength: 3 }),
      solutionContextText: freeText({ unit: "grapheme", maxLength: 200 }),
      workspaceId: hint,
      repo: hint,
      language: hint,
      stream: fc.boolean(),
      agentContextId: id(),
      conversationContextId: id(),
    },
    { requiredKeys: ["sessionId", "turnId"] },
  )
  .filter(hasInput);

/** JSON has no -0 (it reads back as 0), so durations are normalized to +0. */
const executionMs = fc
  .oneof(fc.nat(), fc.double({ min: 0, max: 1e12, noNaN: true, noDefaultInfinity: true }))
  .map((ms) => ms + 0);

const toolResult = fc.oneof(
  fc.record({ toolCallId, executionMs, resultJson: fc.json({ maxDepth: 3 }) }),
  fc.record({
    toolCallId,
    executionMs,
    errorMessage: freeText({ unit: "grapheme", minLength: 1, maxLength: 120 }),
  }),
);

const toolContinuation = fc.record({
  sessionId: id(),
  turnId: id(),
  toolResults: fc.uniqueArray(toolResult, {
    selector: (result) => result.toolCallId,
    minLength: 1,
    maxLength: 5,
  }),
});

// ── arbitraries for junk ────────────────────────────────────────────────────────────────────────────────

const anything = fc.anything({
  maxDepth: 3,
  withBoxedValues: true,
  withMap: true,
  withSet: true,
  withNullPrototype: true,
  withBigInt: true,
  withDate: true,
  withTypedArray: true,
  withSparseArray: true,
  withObjectString: true,
  stringUnit: "binary",
});

/** Every field name the contracts know, their PascalCase forms, and names the server owns. */
const FIELD_NAMES = [
  "sessionId",
  "turnId",
  ...USER_TURN_INPUT_FIELDS,
  "ragScope",
  "solutionContextText",
  "workspaceId",
  "repo",
  "language",
  "stream",
  "agentContextId",
  "conversationContextId",
  "toolResults",
  "SessionId",
  "TurnId",
  "Instruction",
  "mode",
  "previousResponseId",
  "toolsJson",
  "kind",
  "modeDisplayName",
  "primaryOutputText",
  "toolCalls",
  "toolContinuationMessage",
  "files",
  "userWarnings",
  "usage",
  "__proto__",
  "constructor",
];

/** Values that are right for some field and wrong for most, plus `other`. */
const plausibleValue = (other: fc.Arbitrary<unknown>) =>
  fc.oneof(
    id(),
    fc.constant(""),
    fc.constantFrom("final", "client_tool_continuation", "   "),
    fc.array(artifact, { maxLength: 2 }),
    clipboardImages,
    fc.array(toolResult, { maxLength: 2 }),
    fc.array(ragCondition, { maxLength: 2 }),
    fc.array(fc.record({ toolCallId, name: fc.constant("read_file"), argumentsJson: fc.json() }), {
      maxLength: 2,
    }),
    fc.boolean(),
    fc.integer(),
    fc.constant(null),
    other,
  );

const mixedObjectOf = (values: fc.Arbitrary<unknown>) =>
  fc.dictionary(fc.oneof(fc.constantFrom(...FIELD_NAMES), fc.string()), values, { maxKeys: 8 });

/** Objects with real and random keys, holding anything (BigInt, Map, boxed values, …). */
const mixedObject = mixedObjectOf(plausibleValue(anything));

/** A valid request with some fields overwritten or added: any value, or only JSON values. */
const damagedRequestOf = (damage: fc.Arbitrary<Record<string, unknown>>) =>
  fc
    .tuple(fc.oneof(userTurn, toolContinuation), damage)
    .map(([request, extra]) => ({ ...request, ...extra }));
const damagedRequest = damagedRequestOf(mixedObject);
const damagedJsonRequest = damagedRequestOf(mixedObjectOf(plausibleValue(fc.jsonValue({ maxDepth: 3 }))));

// ── helpers ─────────────────────────────────────────────────────────────────────────────────────────────

const require = createRequire(import.meta.url);
const readSchema = (file: string) =>
  JSON.parse(readFileSync(require.resolve(`@aptix/contracts/schema/${file}`), "utf8")) as object;
const requestJsonSchema = new Ajv2020({ allErrors: true, strictTypes: false }).compile(
  readSchema("agent-execute-request.schema.json"),
);
const responseJsonSchema = new Ajv2020({ allErrors: true, formats: { "date-time": true } }).compile(
  readSchema("agent-execute-response.schema.json"),
);

/** Success, or VALIDATION_FAILED whose every field error has a string path and a message; and an InvokeResult. */
function expectWellFormed(result: InvokeResult<unknown>): void {
  if (result.successful) {
    expect(result.errors).toEqual([]);
  } else {
    expectValidationFailure(result);
    expect(AgentExecuteResultSchema.safeParse(result).success).toBe(true);
  }
}

const roundTrip = <T>(value: T): T => JSON.parse(JSON.stringify(value));

// ── properties ──────────────────────────────────────────────────────────────────────────────────────────

describe("valid requests", () => {
  it("a random user turn survives JSON and validates to itself", () => {
    fc.assert(
      fc.property(userTurn, (turn) => {
        const wire = roundTrip(turn);
        expect(wire).toEqual(turn);
        expect(validateAgentExecuteRequest(wire)).toEqual({
          successful: true,
          result: turn,
          errors: [],
          warnings: [],
        });
        expect(requestJsonSchema(wire)).toBe(true);
      }),
      { numRuns: RUNS.valid },
    );
  });

  it("a random tool continuation survives JSON and validates to itself", () => {
    fc.assert(
      fc.property(toolContinuation, (continuation) => {
        const wire = roundTrip(continuation);
        expect(wire).toEqual(continuation);
        expect(validateAgentExecuteRequest(wire)).toEqual({
          successful: true,
          result: continuation,
          errors: [],
          warnings: [],
        });
        expect(requestJsonSchema(wire)).toBe(true);
      }),
      { numRuns: RUNS.valid },
    );
  });
});

describe("junk", () => {
  it("fc.anything() never makes a validator throw", () => {
    fc.assert(
      fc.property(anything, (input) => {
        expectWellFormed(validateAgentExecuteRequest(input));
        expectWellFormed(validateAgentExecuteResponse(input));
      }),
      { numRuns: RUNS.junk },
    );
  });

  it("parsed fc.json() is judged without throwing, and what zod accepts the JSON Schema accepts", () => {
    fc.assert(
      fc.property(fc.json({ maxDepth: 4 }), (text) => {
        const input: unknown = JSON.parse(text);
        const request = validateAgentExecuteRequest(input);
        const response = validateAgentExecuteResponse(input);
        expectWellFormed(request);
        expectWellFormed(response);
        if (request.successful) expect(requestJsonSchema(input)).toBe(true);
        if (response.successful) expect(responseJsonSchema(input)).toBe(true);
      }),
      { numRuns: RUNS.junk },
    );
  });

  it("objects mixing real field names, random keys and wrong-typed values are judged without throwing", () => {
    fc.assert(
      fc.property(fc.oneof(mixedObject, damagedRequest), (input) => {
        const request = validateAgentExecuteRequest(input);
        expectWellFormed(request);
        expectWellFormed(validateAgentExecuteResponse(input));
        if (!request.successful) {
          const scenario = "toolResults" in input ? "tool continuation" : "user turn";
          expect(request.errors[0].details?.scenario).toBe(scenario);
        }
      }),
      { numRuns: RUNS.junk },
    );
  });

  it("a damaged request that survives JSON: when zod accepts it, it is the input and the JSON Schema accepts it too", () => {
    fc.assert(
      fc.property(damagedJsonRequest, (damaged) => {
        const wire = roundTrip(damaged);
        const result = validateAgentExecuteRequest(wire);
        expectWellFormed(result);
        if (result.successful) {
          expect(result.result).toEqual(wire);
          expect(requestJsonSchema(wire)).toBe(true);
        }
      }),
      { numRuns: RUNS.junk },
    );
  });
});

describe("relative paths", () => {
  /** Strings from the characters that make paths tricky: dots, spaces, both separators, the drive colon. */
  const pathLike = fc.string({ unit: fc.constantFrom("a", "b", ".", " ", "/", "\\", ":"), maxLength: 10 });
  const withPath = (relativePath: string) => ({
    sessionId: "s",
    turnId: "t",
    inputArtifacts: [{ relativePath, fileName: "f", contents: "", origin: "ide" }],
  });

  it("zod and the JSON Schema agree, and what they accept is canonical and stays inside, on POSIX and Windows", () => {
    fc.assert(
      fc.property(pathLike, (relativePath) => {
        const accepted = validateAgentExecuteRequest(withPath(relativePath)).successful;
        expect(requestJsonSchema(withPath(relativePath))).toBe(accepted);
        if (!accepted) return;
        const segments = relativePath.split("/");
        expect(segments).not.toContain("..");
        // Windows drops the dots and spaces that end a segment: an accepted path has none to drop.
        expect(segments.map((segment) => segment.replace(/[. ]+$/, ""))).toEqual(segments);
        expect(posix.normalize(relativePath)).toBe(relativePath);
        expect(posix.resolve("/ws", relativePath)).toBe(`/ws/${relativePath}`);
        expect(win32.resolve("C:\\ws", relativePath)).toBe(`C:\\ws\\${relativePath.replaceAll("/", "\\")}`);
      }),
      { numRuns: RUNS.junk },
    );
  });
});

describe("text Postgres cannot keep", () => {
  /** Halves of 📄 (U+1F4C4), the ends of the surrogate range, and NUL. */
  const unstorable = fc.constantFrom("\uD83D", "\uDCC4", "\uD800", "\uDFFF", "\u0000");

  /**
   * `value` with `bad` put between two code points of its string number `index` (counted in JSON order, modulo
   * their number), and that string's path. Between two code points, a surrogate never completes a pair.
   */
  function damaged(value: unknown, index: number, at: number, bad: string) {
    const paths: PropertyKey[][] = [];
    const walk = (node: unknown, path: PropertyKey[]): void => {
      if (typeof node === "string") paths.push(path);
      else if (typeof node === "object" && node !== null) {
        for (const [key, entry] of Object.entries(node))
          walk(entry, [...path, Array.isArray(node) ? Number(key) : key]);
      }
    };
    walk(value, []);
    const path = paths[index % paths.length] ?? [];
    const copy = structuredClone(value) as Record<PropertyKey, unknown>;
    const parent = path.slice(0, -1).reduce((node, key) => node[key] as Record<PropertyKey, unknown>, copy);
    const points = [...(parent[path.at(-1) as PropertyKey] as string)];
    points.splice(at % (points.length + 1), 0, bad);
    parent[path.at(-1) as PropertyKey] = points.join("");
    return { request: copy, path };
  }

  /** Fields whose own character rules refuse such text first, in their own words. */
  const OWN_RULES = new Set([
    "sessionId",
    "turnId",
    "id",
    "agentContextId",
    "conversationContextId",
    "toolCallId",
  ]);
  const ENUMS_AND_FORMATS = new Set(["origin", "encoding", "operator", "mimeType", "dataBase64"]);

  /** The message the contract gives a free-text field holding `bad`; undefined where another rule speaks. */
  function messageFor(request: unknown, path: readonly PropertyKey[], bad: string): string | undefined {
    const field = String(path.at(-1));
    if (OWN_RULES.has(field) || ENUMS_AND_FORMATS.has(field)) return undefined;
    const artifact =
      path[0] === "inputArtifacts"
        ? (request as { inputArtifacts: object[] }).inputArtifacts[path[1] as number]
        : undefined;
    if (field === "contents" && (artifact as { encoding?: string }).encoding === "base64") return undefined;
    if (bad === "\u0000")
      return field === "relativePath" ? "must not contain control characters" : NO_NUL_MESSAGE;
    return LONE_SURROGATE_MESSAGE;
  }

  it("a lone surrogate or NUL in any string of a valid request fails it at that field, in zod and JSON Schema", () => {
    fc.assert(
      fc.property(
        fc.oneof(userTurn, toolContinuation),
        fc.nat(),
        fc.nat(),
        unstorable,
        (valid, index, at, bad) => {
          const { request, path } = damaged(valid, index, at, bad);
          const wire = roundTrip(request);
          expect(wire).toEqual(request);
          const fields = expectValidationFailure(validateAgentExecuteRequest(wire));
          expect(new Set(fields.map((field) => field.path))).toEqual(new Set([formatFieldPath(path)]));
          const message = messageFor(request, path, bad);
          if (message !== undefined) expect(fields.map((field) => field.message)).toContain(message);
          expect(requestJsonSchema(wire)).toBe(false);
        },
      ),
      { numRuns: RUNS.junk },
    );
  });
});
