import type { AgentExecuteRequest } from "@aptix/contracts";
import { describe, expect, it } from "vitest";
import { requestHash } from "../../src/entry/request-hash.js";
import { sha256ContentHashService } from "../../src/index.js";
import type { ContentHashService } from "../../src/ports/content-hash-service.js";

/** Hashes to the canonical text itself, so the tests can see what is hashed. */
const identity: ContentHashService = { hash: (content) => (typeof content === "string" ? content : "bytes") };

describe("requestHash", () => {
  const request: AgentExecuteRequest = {
    sessionId: "s1",
    turnId: "t1",
    instruction: "Explain",
    ragScope: [{ key: "repo", operator: "==", values: ["a", "b"] }],
    inputArtifacts: [{ relativePath: "a.ts", fileName: "a.ts", contents: "x", origin: "ide" }],
  };

  it("hashes the canonical JSON with keys sorted at every depth", () => {
    expect(requestHash({ turnId: "t1", sessionId: "s1", instruction: "Hi" }, identity)).toBe(
      '{"instruction":"Hi","sessionId":"s1","turnId":"t1"}',
    );
    expect(requestHash(request, sha256ContentHashService)).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it("does not depend on key order", () => {
    const reordered: AgentExecuteRequest = {
      inputArtifacts: [{ origin: "ide", contents: "x", fileName: "a.ts", relativePath: "a.ts" }],
      ragScope: [{ values: ["a", "b"], operator: "==", key: "repo" }],
      instruction: "Explain",
      turnId: "t1",
      sessionId: "s1",
    };
    expect(requestHash(reordered, sha256ContentHashService)).toBe(
      requestHash(request, sha256ContentHashService),
    );
  });

  it("ignores stream and keys whose value is undefined", () => {
    const base = requestHash(request, sha256ContentHashService);
    expect(requestHash({ ...request, stream: true }, sha256ContentHashService)).toBe(base);
    expect(requestHash({ ...request, stream: false }, sha256ContentHashService)).toBe(base);
    expect(requestHash({ ...request, repo: undefined }, sha256ContentHashService)).toBe(base);
  });

  it("differs for bodies that differ in meaning", () => {
    const base = requestHash(request, sha256ContentHashService);
    const variants: AgentExecuteRequest[] = [
      { ...request, instruction: "Explain!" },
      { ...request, turnId: "t2" },
      { ...request, ragScope: [{ key: "repo", operator: "==", values: ["b", "a"] }] },
      { ...request, solutionContextText: "" },
      { sessionId: "s1", turnId: "t1", toolResults: [{ toolCallId: "c1", executionMs: 1, resultJson: "1" }] },
    ];
    const hashes = variants.map((variant) => requestHash(variant, sha256ContentHashService));
    expect(new Set([base, ...hashes]).size).toBe(variants.length + 1);
    expect(
      requestHash(
        {
          sessionId: "s1",
          turnId: "t1",
          toolResults: [{ toolCallId: "c1", executionMs: 1, resultJson: "1" }],
        },
        identity,
      ),
    ).not.toBe(
      requestHash(
        {
          sessionId: "s1",
          turnId: "t1",
          toolResults: [{ toolCallId: "c1", executionMs: 2, resultJson: "1" }],
        },
        identity,
      ),
    );
  });
});
