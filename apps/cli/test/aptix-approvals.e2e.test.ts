import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RequestPermissionResponse } from "@agentclientprotocol/sdk";
import { DEFAULT_CATALOG } from "@aptix/server";
import { step } from "@aptix/testing-llm-servers";
import { afterEach, describe, expect, it } from "vitest";
import { startAcpEditor } from "./support/acp-editor.js";
import { runAptix } from "./support/aptix-process.js";
import { openTerminal } from "./support/open-terminal.js";
import { useAptixServer } from "./support/use-aptix-server.js";
import { makeWorkspace } from "./support/workspace-dir.js";

/**
 * Server tools that ask first (DESIGN §16) from the terminal and the editor: the service's `make_file` (the
 * built-in create_file) is configured `"approval": "always"`, so each of its calls reaches `aptix` as a question.
 */
const aptix = useAptixServer(async () => {
  const catalog = join(tmpdir(), `aptix-approvals-catalog-${process.pid}.json`);
  await writeFile(
    catalog,
    JSON.stringify({
      ...DEFAULT_CATALOG,
      modes: DEFAULT_CATALOG.modes.map((mode) => ({ ...mode, tools: [...mode.tools, "make_file"] })),
      serverTools: [{ name: "make_file", builtin: "create_file", approval: "always" }],
    }),
  );
  return { APTIX_CONFIG: catalog };
});

afterEach(() => {
  const pending = aptix.openai.pendingSteps();
  aptix.openai.reset();
  expect(pending, "scripted steps left over").toBe(0);
});

const makeFile = (callId: string, name: string) =>
  step.functionCalls({
    name: "make_file",
    arguments: { name, mimeType: "text/plain", content: "hi", encoding: null, description: null },
    callId,
  });
const DECLINED = JSON.stringify({ error: "The user did not approve this call of make_file." });
const ran = (callId: string) => {
  const output = aptix.toolOutputs().get(callId);
  return output !== undefined && output !== DECLINED;
};

describe("aptix chat and run", () => {
  it("asks on the terminal: no declines, always approves this tool for the rest of the session", async () => {
    const workspace = await makeWorkspace("approve-chat", { "a.txt": "a\n" });
    aptix.openai.script(
      makeFile("call_no", "no.txt"),
      step.text("Not made."),
      makeFile("call_always", "always.txt"),
      step.text("Made."),
      makeFile("call_unasked", "again.txt"),
      step.text("Made again."),
    );
    const chat = openTerminal(aptix.server.url, ["chat"], workspace.dir);
    try {
      await chat.waitFor("> ");
      chat.type("Make a file\r");
      await chat.waitFor("[y]es / [n]o / [a]lways this session");
      expect(chat.text()).toMatch(/Run make_file \{"name":"no\.txt"/);
      chat.type("n\r");
      await chat.waitFor("Not made.");
      let from = chat.text().length;
      chat.type("Make it after all\r");
      await chat.waitFor("[y]es / [n]o / [a]lways this session", from);
      chat.type("a\r");
      await chat.waitFor("Made.", from);
      from = chat.text().length;
      chat.type("Once more\r");
      await chat.waitFor("Made again.", from);
      // Asked twice in all: the third call ran on the earlier "always".
      expect(chat.text().split("[a]lways this session").length - 1).toBe(2);
      expect(chat.text().slice(from)).toMatch(/approved make_file/);
      chat.type("/exit\r");
      expect(await chat.exited).toBe(0);
    } finally {
      chat.kill();
    }
    expect(aptix.toolOutputs().get("call_no")).toBe(DECLINED);
    expect([ran("call_always"), ran("call_unasked")]).toEqual([true, true]);
  });

  it("approves unasked with --yes, and declines when stdin ends without an answer", async () => {
    const workspace = await makeWorkspace("approve-run", { "a.txt": "a\n" });
    aptix.openai.script(makeFile("call_yes", "yes.txt"), step.text("Made."));
    const approved = await runAptix(["run", "Make a file", "--yes", "--url", aptix.server.url], {
      cwd: workspace.dir,
      env: { APTIX_API_KEY: "cli-e2e-key-0123456789" },
    });
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toContain("approved make_file");
    expect(ran("call_yes")).toBe(true);

    aptix.openai.script(makeFile("call_eof", "eof.txt"), step.text("Not made."));
    const declined = await runAptix(["run", "Make a file", "--url", aptix.server.url], {
      cwd: workspace.dir,
      env: { APTIX_API_KEY: "cli-e2e-key-0123456789" },
    });
    expect(declined.code, declined.stderr).toBe(0);
    expect(aptix.toolOutputs().get("call_eof")).toBe(DECLINED);
  });
});

describe("aptix acp", () => {
  it("asks the editor with session/request_permission: reject declines, allow for this session stops asking", async () => {
    const workspace = await makeWorkspace("approve-acp", { "a.txt": "a\n" });
    aptix.openai.script(
      makeFile("call_rejected", "no.txt"),
      step.text("Not made."),
      makeFile("call_allowed", "yes.txt"),
      step.text("Made."),
      makeFile("call_unasked", "again.txt"),
      step.text("Made again."),
    );
    const answers = ["reject_once", "allow_always"];
    const editor = startAcpEditor(workspace.dir, {
      url: aptix.server.url,
      permission: async (): Promise<RequestPermissionResponse> => ({
        outcome: { outcome: "selected", optionId: answers.shift() ?? "reject_once" },
      }),
    });
    try {
      await editor.initialize();
      const { sessionId } = await editor.connection.agent.request("session/new", {
        cwd: workspace.dir,
        mcpServers: [],
      });
      const prompt = (text: string) =>
        editor.connection.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
      for (const text of ["Make a file", "Make it after all", "Once more"])
        expect(await prompt(text)).toEqual({ stopReason: "end_turn" });
    } finally {
      await editor.close();
    }
    expect(
      editor.permissions.map((request) => [request.toolCall.toolCallId, request.toolCall.title]),
    ).toEqual([
      ["call_rejected", "Run make_file"],
      ["call_allowed", "Run make_file"],
    ]);
    expect(aptix.toolOutputs().get("call_rejected")).toBe(DECLINED);
    expect([ran("call_allowed"), ran("call_unasked")]).toEqual([true, true]);
    // The editor saw each approved call finish, as an update of the call it was asked about.
    const updates = editor.updates.map((notification) => notification.update);
    expect(updates).toContainEqual(
      expect.objectContaining({
        sessionUpdate: "tool_call_update",
        toolCallId: "call_allowed",
        status: "completed",
      }),
    );
    expect(updates).toContainEqual(
      expect.objectContaining({
        sessionUpdate: "tool_call_update",
        toolCallId: "call_rejected",
        status: "failed",
      }),
    );
  });
});
