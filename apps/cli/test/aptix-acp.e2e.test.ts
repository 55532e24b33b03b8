import { symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RequestPermissionResponse, SessionNotification } from "@agentclientprotocol/sdk";
import { AptixClient } from "@aptix/client";
import { DEFAULT_CATALOG } from "@aptix/server";
import { step } from "@aptix/testing-llm-servers";
import { afterEach, describe, expect, it } from "vitest";
import { type AcpEditor, type AcpEditorOptions, startAcpEditor } from "./support/acp-editor.js";
import { API_KEY } from "./support/aptix-server.js";
import { CONFINEMENT_SCENARIOS, confinementOutcome } from "./support/confinement-scenarios.js";
import { useAptixServer } from "./support/use-aptix-server.js";
import { makeWorkspace } from "./support/workspace-dir.js";

/**
 * `aptix acp` as an editor drives it: the SDK's client connection plays the editor, spawning the built binary
 * against the real server (PGlite) and a scripted model. The catalog has a second mode, `review`, so that a mode
 * change can be seen.
 */
const aptix = useAptixServer(async () => {
  const catalog = join(tmpdir(), `aptix-acp-catalog-${process.pid}.json`);
  const general = DEFAULT_CATALOG.modes[0];
  await writeFile(
    catalog,
    JSON.stringify({
      ...DEFAULT_CATALOG,
      modes: [
        ...DEFAULT_CATALOG.modes,
        { ...general, id: "review", displayName: "Review", welcomeMessage: "Reviewing." },
      ],
    }),
  );
  return { APTIX_CONFIG: catalog };
});
const editors: AcpEditor[] = [];

afterEach(async () => {
  // Whatever else a test checks: the agent's stdout held JSON-RPC 2.0 messages, one a line, and nothing else.
  for (const editor of editors.splice(0)) {
    await editor.close();
    for (const line of editor.stdoutLines()) {
      expect(() => JSON.parse(line), line).not.toThrow();
      expect(JSON.parse(line), line).toMatchObject({ jsonrpc: "2.0" });
    }
  }
  const pending = aptix.openai.pendingSteps();
  aptix.openai.reset();
  expect(pending, "scripted steps left over").toBe(0);
});

function editor(cwd: string, options: Partial<AcpEditorOptions> = {}): AcpEditor {
  const started = startAcpEditor(cwd, { url: aptix.server.url, ...options });
  editors.push(started);
  return started;
}

/** An editor that initialized and opened a session in `cwd`. */
async function session(cwd: string, options: Partial<AcpEditorOptions> = {}) {
  const started = editor(cwd, options);
  await started.initialize();
  const opened = await started.connection.agent.request("session/new", { cwd, mcpServers: [] });
  const prompt = (text: string) =>
    started.connection.agent.request("session/prompt", {
      sessionId: opened.sessionId,
      prompt: [{ type: "text", text }],
    });
  return { editor: started, sessionId: opened.sessionId, opened, prompt };
}

/** What the agent sent of the conversation: every update but the commands it offers (sent after it answers). */
const conversationOf = (editor: AcpEditor) =>
  editor.updates.filter((notification) => notification.update.sessionUpdate !== "available_commands_update");
const updatesOf = (editor: AcpEditor, kind: string) =>
  editor.updates.map((notification) => notification.update).filter((update) => update.sessionUpdate === kind);
const textOf = (updates: SessionNotification[]) =>
  updates
    .map((notification) => notification.update)
    .flatMap((update) =>
      update.sessionUpdate === "agent_message_chunk" && update.content.type === "text"
        ? [update.content.text]
        : [],
    )
    .join("");
const toolOutput = (callId: string) => aptix.toolOutputs().get(callId);
const service = () => new AptixClient({ baseUrl: aptix.server.url, apiKey: API_KEY });

const CART =
  "export function cartTotal(prices: number[]) {\n  return prices.reduce((sum, price) => sum - price, 0);\n}\n";
const FIXED =
  "export function cartTotal(prices: number[]) {\n  return prices.reduce((sum, price) => sum + price, 0);\n}\n";
const ON_DISK = "export function cartTotal() {\n  return 0;\n}\n";
const CART_PATCH = [
  "--- a/src/cart.ts",
  "+++ b/src/cart.ts",
  "@@ -1,3 +1,3 @@",
  " export function cartTotal(prices: number[]) {",
  "-  return prices.reduce((sum, price) => sum - price, 0);",
  "+  return prices.reduce((sum, price) => sum + price, 0);",
  " }",
  "",
].join("\n");
const allow = (optionId: string) => async (): Promise<RequestPermissionResponse> => ({
  outcome: { outcome: "selected", optionId },
});

describe("aptix acp: initialize and sessions", () => {
  it("answers initialize with its info and capabilities, and session/new with a session and the service's modes", async () => {
    const workspace = await makeWorkspace("acp-init", { "a.txt": "a\n" });
    const started = editor(workspace.dir);
    const initialized = await started.initialize();
    expect(initialized).toMatchObject({
      protocolVersion: 1,
      agentInfo: { name: "aptix" },
      agentCapabilities: { loadSession: true, promptCapabilities: { image: true, embeddedContext: true } },
    });
    const opened = await started.connection.agent.request("session/new", {
      cwd: workspace.dir,
      mcpServers: [],
    });
    expect(opened.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(opened.modes).toEqual({
      currentModeId: "general",
      availableModes: [
        { id: "general", name: "General" },
        { id: "review", name: "Review" },
      ],
    });
  });

  it("refuses an editor's MCP servers, a relative cwd and session/set_mode, each saying why", async () => {
    const workspace = await makeWorkspace("acp-refusals", { "a.txt": "a\n" });
    const started = editor(workspace.dir);
    await started.initialize();
    const { agent } = started.connection;
    await expect(
      agent.request("session/new", {
        cwd: workspace.dir,
        mcpServers: [{ name: "docs", command: "docs-server", args: [], env: [] }],
      }),
    ).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("runs no MCP servers of the editor's (docs)"),
    });
    await expect(agent.request("session/new", { cwd: "relative/dir", mcpServers: [] })).rejects.toMatchObject(
      {
        code: -32602,
        message: expect.stringContaining("not an absolute path to a directory"),
      },
    );
    const { sessionId } = await agent.request("session/new", { cwd: workspace.dir, mcpServers: [] });
    await expect(agent.request("session/set_mode", { sessionId, modeId: "review" })).rejects.toMatchObject({
      message: expect.stringContaining("The mode is the service's"),
    });
  });
});

describe("aptix acp: a prompt with the workspace's tools", () => {
  it("reads the editor's unsaved buffer, searches the disk, and writes an allowed patch through the editor", async () => {
    const workspace = await makeWorkspace("acp-fix", {
      "src/cart.ts": ON_DISK,
      "README.md": "The cart TOTAL is a sum.\n",
    });
    const cartPath = join(workspace.dir, "src/cart.ts");
    aptix.openai.script(
      step.functionCalls({
        name: "read_file",
        arguments: { path: "src/cart.ts", startLine: null, endLine: null },
        callId: "call_read",
      }),
      step.functionCalls({
        name: "search_files",
        arguments: { query: "total", glob: null },
        callId: "call_search",
      }),
      step.functionCalls({ name: "apply_patch", arguments: { patch: CART_PATCH }, callId: "call_patch" }),
      step.text(["Fixed ", "the sign."]),
    );
    const { editor: started, prompt } = await session(workspace.dir, {
      buffers: new Map([[cartPath, CART]]),
      permission: allow("allow_once"),
    });
    expect(await prompt("Fix the cart total")).toEqual({ stopReason: "end_turn" });

    // The model read the buffer, not the disk; the patch applied to the buffer and went back through the editor.
    expect(JSON.parse(toolOutput("call_read") ?? "")).toMatchObject({ contents: CART });
    expect(started.reads).toContain(cartPath);
    expect(JSON.parse(toolOutput("call_search") ?? "").matches).toEqual(
      expect.arrayContaining([expect.objectContaining({ path: "README.md", line: 1 })]),
    );
    expect(started.writes).toEqual([{ path: cartPath, content: FIXED }]);
    expect(await workspace.read("src/cart.ts")).toBe(FIXED);
    expect(JSON.parse(toolOutput("call_patch") ?? "")).toEqual({
      applied: true,
      files: [{ path: "src/cart.ts", change: "modified" }],
    });

    // The editor saw each call with its kind, asked about the patch with its diff, and saw each call end.
    expect(updatesOf(started, "tool_call")).toEqual([
      expect.objectContaining({ toolCallId: "call_read", kind: "read", status: "pending" }),
      expect.objectContaining({ toolCallId: "call_search", kind: "search", status: "pending" }),
      expect.objectContaining({ toolCallId: "call_patch", kind: "edit", status: "pending" }),
    ]);
    // Where a call reads and writes, once the path is confined: the file the read opened, the files the patch changes.
    expect(updatesOf(started, "tool_call").some((update) => "locations" in update)).toBe(false);
    expect(updatesOf(started, "tool_call_update").filter((update) => "locations" in update)).toEqual([
      expect.objectContaining({ toolCallId: "call_read", locations: [{ path: cartPath }] }),
      expect.objectContaining({ toolCallId: "call_patch", locations: [{ path: cartPath }] }),
    ]);
    const diff = { type: "diff", path: cartPath, oldText: CART, newText: FIXED };
    expect(started.permissions).toEqual([
      expect.objectContaining({
        toolCall: expect.objectContaining({ toolCallId: "call_patch", kind: "edit", content: [diff] }),
        options: expect.arrayContaining([
          expect.objectContaining({ kind: "allow_once" }),
          expect.objectContaining({ kind: "allow_always" }),
          expect.objectContaining({ kind: "reject_once" }),
        ]),
      }),
    ]);
    const finals = updatesOf(started, "tool_call_update").filter(
      (update) =>
        update.sessionUpdate === "tool_call_update" &&
        (update.status === "completed" || update.status === "failed"),
    );
    expect(finals).toEqual([
      expect.objectContaining({ toolCallId: "call_read", status: "completed" }),
      expect.objectContaining({ toolCallId: "call_search", status: "completed" }),
      expect.objectContaining({ toolCallId: "call_patch", status: "completed", content: [diff] }),
    ]);
    // The answer, then the service's warning, with the command that fixes it.
    expect(textOf(started.updates)).toMatch(
      /^Fixed the sign\.\n\n> Warning WORKSPACE_NOT_FOUND: .*To index it, run: aptix index "/s,
    );
    expect(textOf(started.updates)).toContain(JSON.stringify(workspace.dir));
  });

  it("tells the editor a call's location only once the path is confined: the real file for a link inside, none for a path refused", async () => {
    const workspace = await makeWorkspace("acp-locations", { "src/cart.ts": CART });
    await writeFile(join(workspace.outside, "id_rsa"), "PRIVATE KEY\n");
    await symlink("src/cart.ts", join(workspace.dir, "cart-link.ts"));
    await symlink(join(workspace.outside, "id_rsa"), join(workspace.dir, "key-link"));
    const readCall = (path: string, callId: string) => ({
      name: "read_file",
      arguments: { path, startLine: null, endLine: null },
      callId,
    });
    aptix.openai.script(
      step.functionCalls([
        readCall("../outside/id_rsa", "call_dotdot"),
        readCall(join(workspace.outside, "id_rsa"), "call_absolute"),
        readCall("key-link", "call_link_out"),
        readCall(".git::$INDEX_ALLOCATION/config", "call_git"),
        readCall("./src//cart.ts", "call_spelled"),
        readCall("cart-link.ts", "call_link_in"),
      ]),
      step.text("Read."),
    );
    const { editor: started, prompt } = await session(workspace.dir);
    expect(await prompt("Read the key")).toEqual({ stopReason: "end_turn" });
    const locations = [...updatesOf(started, "tool_call"), ...updatesOf(started, "tool_call_update")].flatMap(
      (update) =>
        "locations" in update && update.locations
          ? update.locations.map((location) => [update.toolCallId, location.path])
          : [],
    );
    const cartPath = join(workspace.dir, "src/cart.ts");
    expect(locations).toEqual([
      ["call_spelled", cartPath],
      ["call_link_in", cartPath],
    ]);
    // The editor still shows what the model asked for, as the call's title and raw input.
    expect(updatesOf(started, "tool_call")[0]).toMatchObject({
      toolCallId: "call_dotdot",
      title: "Read ../outside/id_rsa",
      rawInput: { path: "../outside/id_rsa" },
    });
    expect(started.reads).toEqual([cartPath, cartPath]);
  });

  it("sends a rejected patch back to the model as an error and writes nothing; allow always stops asking", async () => {
    const workspace = await makeWorkspace("acp-reject", { "src/cart.ts": CART });
    const answers = ["reject_once", "allow_always"];
    aptix.openai.script(
      step.functionCalls({ name: "apply_patch", arguments: { patch: CART_PATCH }, callId: "call_rejected" }),
      step.text("Left it."),
      step.functionCalls({ name: "apply_patch", arguments: { patch: CART_PATCH }, callId: "call_always" }),
      step.text("Fixed."),
      step.functionCalls({
        name: "apply_patch",
        arguments: { patch: ["--- /dev/null", "+++ b/notes.md", "@@ -0,0 +1 @@", "+fixed", ""].join("\n") },
        callId: "call_unasked",
      }),
      step.text("Noted."),
      step.functionCalls({
        name: "apply_patch",
        arguments: {
          patch: ["--- /dev/null", "+++ b/.vscode/tasks.json", "@@ -0,0 +1 @@", '+{"tasks":[]}', ""].join(
            "\n",
          ),
        },
        callId: "call_hook",
      }),
      step.text("Set up."),
    );
    const { editor: started, prompt } = await session(workspace.dir, {
      permission: async () => ({
        outcome: { outcome: "selected", optionId: answers.shift() ?? "reject_once" },
      }),
    });
    expect(await prompt("Fix the cart")).toEqual({ stopReason: "end_turn" });
    expect(toolOutput("call_rejected")).toBe(
      JSON.stringify({ error: "The user declined the patch: no file was changed." }),
    );
    expect(started.writes).toEqual([]);
    expect(await workspace.read("src/cart.ts")).toBe(CART);
    expect(updatesOf(started, "tool_call_update").at(-1)).toMatchObject({
      toolCallId: "call_rejected",
      status: "failed",
    });

    expect(await prompt("Fix it after all")).toEqual({ stopReason: "end_turn" });
    expect(await prompt("Note it")).toEqual({ stopReason: "end_turn" });
    expect(started.permissions.map((request) => request.toolCall.toolCallId)).toEqual([
      "call_rejected",
      "call_always",
    ]);
    expect(await workspace.read("src/cart.ts")).toBe(FIXED);
    expect(await workspace.read("notes.md")).toBe("fixed\n");

    // A file that runs code when the project is opened is asked about all the same, with no "always" to choose.
    answers.push("allow_once");
    expect(await prompt("Set up a task")).toEqual({ stopReason: "end_turn" });
    expect(started.permissions.at(-1)).toMatchObject({
      toolCall: {
        toolCallId: "call_hook",
        title: "Apply a patch to files that run code when the project is opened (.vscode/tasks.json)",
      },
      options: [
        expect.objectContaining({ kind: "allow_once" }),
        expect.objectContaining({ kind: "reject_once" }),
      ],
    });
    expect(await workspace.read(".vscode/tasks.json")).toBe('{"tasks":[]}\n');
  });

  it("reports the service's mode change as current_mode_update and its tool as a finished tool_call", async () => {
    const workspace = await makeWorkspace("acp-mode", { "a.txt": "a\n" });
    aptix.openai.script(
      // Text before the switch: the service drops it (output_text.reset), which the editor is told.
      step.functionCalls(
        {
          name: "agent_change_mode",
          arguments: { mode: "review", reason: "The user wants a review.", branch: false },
          callId: "call_mode",
        },
        { text: "Let me look." },
      ),
      step.text("Reviewing now."),
    );
    const { editor: started, prompt } = await session(workspace.dir);
    expect(await prompt("Review my change")).toEqual({ stopReason: "end_turn" });
    expect(updatesOf(started, "current_mode_update")).toEqual([
      { sessionUpdate: "current_mode_update", currentModeId: "review" },
    ]);
    expect(updatesOf(started, "tool_call")).toEqual([
      expect.objectContaining({ toolCallId: "call_mode", kind: "switch_mode", status: "completed" }),
    ]);
    const text = textOf(started.updates);
    expect(text).toMatch(
      /^Let me look\.\n\n_\(The answer above was revised; the new answer follows\.\)_\n\n/,
    );
    // Then the new mode's welcome and the answer.
    expect(text).toContain("_\n\nReviewing.\n\nReviewing now.");
  });

  it("answers a failed turn with JSON-RPC error -32603 carrying the service's errors", async () => {
    const workspace = await makeWorkspace("acp-failed", { "a.txt": "a\n" });
    aptix.openai.script(step.error(500));
    const { prompt } = await session(workspace.dir);
    await expect(prompt("Fail")).rejects.toMatchObject({
      code: -32603,
      message: expect.any(String),
      data: { errors: [expect.objectContaining({ code: "PROVIDER_ERROR" })] },
    });
  });
});

describe("aptix acp: cancel and load", () => {
  it("cancels the turn on the service when the editor cancels while it asks about a patch", async () => {
    const workspace = await makeWorkspace("acp-cancel", { "src/cart.ts": CART });
    aptix.openai.script(
      step.functionCalls({ name: "apply_patch", arguments: { patch: CART_PATCH }, callId: "call_patch" }),
    );
    let sessionId = "";
    const started = editor(workspace.dir, {
      // The user cancels the prompt while the dialog is open: the editor then answers the dialog `cancelled`.
      permission: async () => {
        await started.connection.agent.notify("session/cancel", { sessionId });
        return { outcome: { outcome: "cancelled" } };
      },
    });
    await started.initialize();
    ({ sessionId } = await started.connection.agent.request("session/new", {
      cwd: workspace.dir,
      mcpServers: [],
    }));
    const answer = await started.connection.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "Fix the cart" }],
    });
    expect(answer).toEqual({ stopReason: "cancelled" });
    // The open dialog counted as a rejection: the call failed and nothing was written.
    expect(updatesOf(started, "tool_call_update").at(-1)).toMatchObject({
      toolCallId: "call_patch",
      status: "failed",
    });
    expect(started.writes).toEqual([]);
    expect(await workspace.read("src/cart.ts")).toBe(CART);
    const viewed = await service().getSession(sessionId);
    expect(viewed.successful && viewed.result.turns.map((turn) => turn.status)).toEqual(["cancelled"]);

    // The session takes the next prompt at once.
    aptix.openai.script(step.text("Still here."));
    const next = await started.connection.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "Are you there?" }],
    });
    expect(next).toEqual({ stopReason: "end_turn" });
  });

  it("cancels the turn on the service when the editor cancels while the answer streams", async () => {
    const workspace = await makeWorkspace("acp-cancel-stream", { "a.txt": "a\n" });
    const deltas = Array.from({ length: 50 }, (_, index) => `word${index} `);
    aptix.openai.script(step.text(deltas, { chunkDelayMs: 100 }));
    let sessionId = "";
    let cancelling: Promise<void> | undefined;
    const started = editor(workspace.dir, {
      // The user cancels as soon as the answer starts to show.
      onUpdate: (notification) => {
        if (notification.update.sessionUpdate === "agent_message_chunk")
          cancelling ??= started.connection.agent.notify("session/cancel", { sessionId });
      },
    });
    await started.initialize();
    ({ sessionId } = await started.connection.agent.request("session/new", {
      cwd: workspace.dir,
      mcpServers: [],
    }));
    const answer = await started.connection.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "Tell me a long story" }],
    });
    expect(answer).toEqual({ stopReason: "cancelled" });
    // The cancel was sent once, at the first chunk, and delivered.
    expect(cancelling).toBeDefined();
    await cancelling;
    const viewed = await service().getSession(sessionId);
    expect(viewed.successful && viewed.result.turns.map((turn) => turn.status)).toEqual(["cancelled"]);
  });

  it("replays a session's conversation on session/load, in a new agent process", async () => {
    const workspace = await makeWorkspace("acp-load", { "src/cart.ts": CART });
    aptix.openai.script(
      step.functionCalls({
        name: "read_file",
        arguments: { path: "src/cart.ts", startLine: null, endLine: null },
        callId: "call_read",
      }),
      step.text("It subtracts."),
      step.text("You are welcome."),
    );
    const first = await session(workspace.dir);
    await first.prompt("What does cartTotal do?");
    await first.prompt("Thanks");
    await first.editor.close();

    const second = editor(workspace.dir);
    await second.initialize();
    const loaded = await second.connection.agent.request("session/load", {
      sessionId: first.sessionId,
      cwd: workspace.dir,
      mcpServers: [],
    });
    expect(loaded).toMatchObject({ modes: { currentModeId: "general" } });
    expect(conversationOf(second).map((notification) => notification.update)).toEqual([
      { sessionUpdate: "user_message_chunk", content: { type: "text", text: "What does cartTotal do?" } },
      expect.objectContaining({
        sessionUpdate: "tool_call",
        kind: "read",
        status: "completed",
        title: "Read src/cart.ts",
      }),
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "It subtracts." } },
      { sessionUpdate: "user_message_chunk", content: { type: "text", text: "Thanks" } },
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "You are welcome." } },
    ]);
    expect(second.updates.every((notification) => notification.sessionId === first.sessionId)).toBe(true);

    // A session opened and never prompted is unknown to the service: it loads empty, in the starting mode.
    const unused = await second.connection.agent.request("session/new", {
      cwd: workspace.dir,
      mcpServers: [],
    });
    const before = conversationOf(second).length;
    expect(
      await second.connection.agent.request("session/load", {
        sessionId: unused.sessionId,
        cwd: workspace.dir,
        mcpServers: [],
      }),
    ).toMatchObject({ modes: { currentModeId: "general" } });
    expect(conversationOf(second)).toHaveLength(before);
    await expect(
      second.connection.agent.request("session/load", {
        sessionId: "not valid!",
        cwd: workspace.dir,
        mcpServers: [],
      }),
    ).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("sessionId") });
  });
});

describe("aptix acp: the tools stay in the workspace, as the terminal agent's do", () => {
  const cases = CONFINEMENT_SCENARIOS.flatMap((scenario) => [
    [`${scenario.name}, the editor offering fs`, scenario, true] as const,
    [`${scenario.name}, on disk`, scenario, false] as const,
  ]);
  it.each(cases)("%s", async (_name, scenario, fs) => {
    const workspace = await makeWorkspace("confined", scenario.files);
    await scenario.prepare(workspace);
    aptix.openai.script(step.functionCalls(scenario.calls(workspace)), step.text("Done."));
    // Every patch allowed, the most each dialog offers ("allow always" when it is offered), as `--yes` does for the
    // terminal agent: only the confinement, and the questions it insists on, stand in the way.
    const { editor: started, prompt } = await session(workspace.dir, {
      fs,
      env: scenario.env ?? {},
      permission: async (request) => ({
        outcome: {
          outcome: "selected",
          optionId: request.options.some((option) => option.kind === "allow_always")
            ? "allow_always"
            : "allow_once",
        },
      }),
    });
    expect(await prompt("Look around")).toEqual({ stopReason: "end_turn" });
    const asked = started.permissions.map((request) => request.toolCall.toolCallId);
    await scenario.check(confinementOutcome(aptix.toolOutputs(), workspace, asked));
    // The editor was asked for nothing outside the workspace, nor inside .git, and told no location there.
    const locations = started.updates.flatMap(({ update }) =>
      update.sessionUpdate === "tool_call" || update.sessionUpdate === "tool_call_update"
        ? (update.locations ?? []).map((location) => location.path)
        : [],
    );
    for (const path of [...started.reads, ...started.writes.map((write) => write.path), ...locations]) {
      expect(path.startsWith(`${workspace.dir}/`), path).toBe(true);
      expect(path).not.toMatch(/\/\.git\//);
      expect(path.split("/")).not.toContain("..");
    }
  });
});
