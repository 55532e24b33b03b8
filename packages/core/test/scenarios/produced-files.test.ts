import { describe, expect, it } from "vitest";
import { createCreateFileTool, type ServerTool, sha256ContentHashService } from "../../src/index.js";
import { catalogWithModes, createTestAgent, PRINCIPAL, responseOf, resultOf } from "../support/test-agent.js";

const config = catalogWithModes({
  id: "general",
  displayName: "General",
  instructions: "Help with anything.",
  tools: ["create_file", "read_file"],
  toolChoice: null,
});

async function fileAgent(options: { maxBytes?: number } = {}) {
  return createTestAgent({
    config,
    serverTools: [createCreateFileTool() as ServerTool],
    producedFiles: { publicUrl: "https://agent.example/prefix", ttlSeconds: 3_600, ...options },
  });
}

const fileIdIn = (url: string) => url.slice("https://agent.example/prefix/v1/files/".length);

/** A `create_file` call: a small text file unless `args` say otherwise. */
const createFile = (callId: string, args: Record<string, unknown> = {}) => ({
  name: "create_file",
  callId,
  arguments: {
    name: "a.txt",
    mimeType: "text/plain",
    content: "abc",
    encoding: null,
    description: null,
    ...args,
  },
});

describe("create_file and produced files (AGN-033 §6)", () => {
  it("stores the model's file, answers the model its FileRef and lists it on the final response", async () => {
    const agent = await fileAgent();
    agent.provider.enqueue(
      {
        toolCalls: [
          createFile("f1", {
            name: "notes.md",
            mimeType: "text/markdown",
            content: "# Notes\n",
            description: "The notes.",
          }),
          createFile("f2", {
            name: "pixel.bin",
            mimeType: "application/octet-stream",
            content: "AAEC/w==",
            encoding: "base64",
          }),
        ],
      },
      { text: "Both files are ready." },
    );
    const final = responseOf(
      await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Write notes" }),
    );
    if (final.kind !== "final") throw new Error("expected a final response");
    const notes = new TextEncoder().encode("# Notes\n");
    const expires = new Date(agent.clock.now().getTime() + 3_600_000).toISOString();
    expect(final.files).toEqual([
      {
        name: "notes.md",
        mimeType: "text/markdown",
        url: expect.stringMatching(/^https:\/\/agent\.example\/prefix\/v1\/files\/file_\d+$/),
        sizeBytes: notes.byteLength,
        contentHash: sha256ContentHashService.hash(notes),
        description: "The notes.",
        contentExpires: expires,
      },
      expect.objectContaining({ name: "pixel.bin", sizeBytes: 4, contentExpires: expires }),
    ]);
    const [notesRef, pixelRef] = final.files ?? [];
    if (!notesRef || !pixelRef) throw new Error("files missing");
    // The model saw the same FileRef as the client.
    expect(agent.provider.requests[1]?.input.slice(-2)).toEqual([
      { type: "function_call_output", callId: "f1", output: JSON.stringify(notesRef), isError: false },
      { type: "function_call_output", callId: "f2", output: JSON.stringify(pixelRef), isError: false },
    ]);
    expect(final.toolResults?.map((result) => result.resultJson)).toEqual([
      JSON.stringify(notesRef),
      JSON.stringify(pixelRef),
    ]);
    const pixel = resultOf(await agent.service.getFile(PRINCIPAL, fileIdIn(pixelRef.url)));
    expect(Array.from(pixel.content)).toEqual([0, 1, 2, 255]);
  });

  it("refuses bad arguments and a file over files.maxBytes back to the model, and the turn goes on", async () => {
    const agent = await fileAgent({ maxBytes: 4 });
    agent.provider.enqueue(
      {
        toolCalls: [
          createFile("f1", { name: "../a.txt" }),
          createFile("f2", { mimeType: "text" }),
          createFile("f3", { encoding: "base64", content: "not base64!" }),
          createFile("f4", { content: "too long" }),
        ],
      },
      { text: "I could not." },
    );
    const final = responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Write" }));
    expect(final.kind === "final" && final.files).toBeUndefined();
    expect(final.kind === "final" && final.toolResults?.map((result) => result.errorMessage)).toEqual([
      "Invalid arguments for create_file: name must be a file name (1–255 characters, no '/', '\\' or control characters)",
      "Invalid arguments for create_file: mimeType must be an ASCII media type such as text/plain or " +
        "text/plain; charset=utf-8 (type/subtype, then optional ; name=value parameters; at most 255 characters)",
      "Invalid arguments for create_file: content must be base64 (A–Z, a–z, 0–9, '+', '/', padded with '=')",
      "The file is 8 bytes; files may have at most 4 bytes.",
    ]);
    expect(
      agent.provider.requests[1]?.input.every((item) => item.type === "function_call_output" && item.isError),
    ).toBe(true);
  });

  it("answers FILE_EXPIRED once the file's content has expired, and FILE_NOT_FOUND once the sweep deleted it", async () => {
    const agent = await fileAgent();
    agent.provider.enqueue(
      {
        toolCalls: [createFile("f1", { content: "a" })],
      },
      { text: "Done." },
    );
    const final = responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Write" }));
    const ref = final.kind === "final" ? final.files?.[0] : undefined;
    if (!ref?.contentExpires) throw new Error("no file");
    const fileId = fileIdIn(ref.url);

    agent.clock.advance(3_600_000 - 1);
    expect(await agent.service.sweepFiles()).toBe(0);
    expect((await agent.service.getFile(PRINCIPAL, fileId)).successful).toBe(true);

    agent.clock.advance(1);
    expect(await agent.service.getFile(PRINCIPAL, fileId)).toEqual({
      successful: false,
      errors: [
        {
          code: "FILE_EXPIRED",
          message: `File "${fileId}" expired at ${ref.contentExpires}.`,
          details: { fileId, contentExpires: ref.contentExpires },
        },
      ],
      warnings: [],
    });
    // Another principal learns nothing, expired or not.
    expect(resultCode(await agent.service.getFile("bob", fileId))).toBe("FILE_NOT_FOUND");

    expect(await agent.service.sweepFiles()).toBe(1);
    expect(resultCode(await agent.service.getFile(PRINCIPAL, fileId))).toBe("FILE_NOT_FOUND");
  });
});

describe("files of a forked session's copied turns", () => {
  it("stay downloadable once the source is deleted, and once the fork is, from the source", async () => {
    const agent = await fileAgent();
    agent.provider.enqueue({ toolCalls: [createFile("f1")] }, { text: "Made it." }, { text: "Fine." });
    const made = responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Write" }));
    responseOf(await agent.execute({ sessionId: "s", turnId: "t2", instruction: "Thanks" }));
    const fileId = fileIdIn((made.kind === "final" && made.files?.[0]?.url) || "");
    const fork = (newSessionId: string) => agent.service.forkSession(PRINCIPAL, "s", { newSessionId });
    const served = async () => (await agent.service.getFile(PRINCIPAL, fileId)).successful;

    resultOf(await fork("first"));
    resultOf(await agent.service.deleteSession(PRINCIPAL, "first"));
    expect(await served()).toBe(true);
    resultOf(await fork("second"));
    resultOf(await agent.service.deleteSession(PRINCIPAL, "s"));
    expect(await served()).toBe(true);
    resultOf(await agent.service.deleteSession(PRINCIPAL, "second"));
    expect(resultCode(await agent.service.getFile(PRINCIPAL, fileId))).toBe("FILE_NOT_FOUND");
  });
});

describe("files of turns that fail or are cancelled (docs/security.md, delete means gone)", () => {
  /** The FileRef the model got for its `create_file` call, from the output the next LLM call carried. */
  const keptFileId = (agent: Awaited<ReturnType<typeof fileAgent>>, request: number) => {
    const output = agent.provider.requests[request]?.input.find(
      (item) => item.type === "function_call_output",
    );
    const ref = JSON.parse((output as { output: string }).output) as { url: string };
    return fileIdIn(ref.url);
  };

  it("answers a file of a turn that then failed as unknown", async () => {
    const agent = await fileAgent();
    agent.provider.enqueue(
      { toolCalls: [createFile("f1")] },
      { failure: { successful: false, errors: [{ code: "PROVIDER_ERROR", message: "down" }], warnings: [] } },
    );
    const failed = await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Write" });
    expect(resultCode(failed)).toBe("PROVIDER_ERROR");
    expect(resultCode(await agent.service.getFile(PRINCIPAL, keptFileId(agent, 1)))).toBe("FILE_NOT_FOUND");
  });

  it("answers a file of a cancelled turn as unknown, and serves one of a turn that ended well", async () => {
    const agent = await fileAgent();
    agent.provider.enqueue({
      toolCalls: [createFile("f1"), { name: "read_file", callId: "r1", arguments: { path: "a.ts" } }],
    });
    const paused = responseOf(await agent.execute({ sessionId: "s", turnId: "t1", instruction: "Write" }));
    expect(paused.kind).toBe("client_tool_continuation");
    // The turn is awaiting its client: the file it kept so far is served.
    const turn = await agent.store.turns.getTurn({ principal: PRINCIPAL, sessionId: "s" }, "t1");
    const fileId = fileIdIn((JSON.parse(turn?.toolExecutions[0]?.resultJson ?? "{}") as { url: string }).url);
    expect((await agent.service.getFile(PRINCIPAL, fileId)).successful).toBe(true);
    expect(resultOf(await agent.service.cancelTurn(PRINCIPAL, "s", "t1"))).toMatchObject({
      status: "cancelled",
    });
    expect(resultCode(await agent.service.getFile(PRINCIPAL, fileId))).toBe("FILE_NOT_FOUND");
  });
});

function resultCode(result: { successful: boolean; errors: Array<{ code: string }> }): string | undefined {
  return result.errors[0]?.code;
}
