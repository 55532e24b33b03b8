import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SessionNotification } from "@agentclientprotocol/sdk";
import { AptixClient } from "@aptix/client";
import { DEFAULT_CATALOG } from "@aptix/server";
import { step } from "@aptix/testing-llm-servers";
import { afterEach, describe, expect, it } from "vitest";
import { startAcpEditor } from "./support/acp-editor.js";
import { API_KEY } from "./support/aptix-server.js";
import { openTerminal } from "./support/open-terminal.js";
import { useAptixServer } from "./support/use-aptix-server.js";
import { makeWorkspace } from "./support/workspace-dir.js";

/**
 * Compaction from the terminal and the editor (docs/context-window.md): `/compact` in `aptix chat` and the `compact` command
 * `aptix acp` offers, and the one-line notice when the service compacts by itself. The window is the smallest the
 * service accepts, so a model reporting a large input makes the next call compact.
 */
const aptix = useAptixServer(async () => {
  const catalog = join(tmpdir(), `aptix-compact-catalog-${process.pid}.json`);
  await writeFile(
    catalog,
    JSON.stringify({
      ...DEFAULT_CATALOG,
      conversationContexts: DEFAULT_CATALOG.conversationContexts.map((context) => ({
        ...context,
        contextWindowTokens: 1_000,
      })),
    }),
  );
  return { APTIX_CONFIG: catalog };
});

afterEach(() => {
  const pending = aptix.openai.pendingSteps();
  aptix.openai.reset();
  expect(pending, "scripted steps left over").toBe(0);
});

const compactions = async (sessionId: string) => {
  const session = await new AptixClient({ baseUrl: aptix.server.url, apiKey: API_KEY }).getSession(sessionId);
  return session.successful ? session.result.compactions.length : undefined;
};

describe("aptix chat", () => {
  it("compacts on /compact, and prints one line when the service compacts before a call", async () => {
    const workspace = await makeWorkspace("compact-chat", { "a.txt": "a\n" });
    aptix.openai.script(
      step.text("Noted: the budget is 42."),
      step.text("Summary: the budget is 42."),
      // Past 80 % of the 1,000-token window: the next turn's call compacts first.
      step.text("Still 42.", { usage: { input_tokens: 950, output_tokens: 5 } }),
      step.text("Summary again: the budget is 42."),
      step.text("42, as agreed."),
    );
    const chat = openTerminal(aptix.server.url, ["chat", "--session", "compact-chat-1"], workspace.dir);
    try {
      await chat.waitFor("> ");
      chat.type("The budget is 42\r");
      await chat.waitFor("Noted: the budget is 42.");
      chat.type("/compact\r");
      await chat.waitFor("Compacted: ");
      let from = chat.text().length;
      chat.type("What is the budget?\r");
      await chat.waitFor("Still 42.", from);
      from = chat.text().length;
      chat.type("And now?\r");
      await chat.waitFor("42, as agreed.", from);
      expect(chat.text().slice(from)).toMatch(/\(conversation compacted: \d+ → \d+ tokens? of context\)/);
      chat.type("/exit\r");
      expect(await chat.exited).toBe(0);
    } finally {
      chat.kill();
    }
    expect(chat.text()).toMatch(/Compacted: \d+ → \d+ tokens? of context\./);
    expect(await compactions("compact-chat-1")).toBe(2);
  });
});

describe("aptix acp", () => {
  it("offers the compact command, and compacts the service's session on /compact", async () => {
    const workspace = await makeWorkspace("compact-acp", { "a.txt": "a\n" });
    aptix.openai.script(step.text("Noted."), step.text("Summary: noted."));
    const editor = startAcpEditor(workspace.dir, { url: aptix.server.url });
    let sessionId = "";
    try {
      await editor.initialize();
      ({ sessionId } = await editor.connection.agent.request("session/new", {
        cwd: workspace.dir,
        mcpServers: [],
      }));
      const prompt = (text: string) =>
        editor.connection.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
      expect(await prompt("Remember this")).toEqual({ stopReason: "end_turn" });
      expect(await prompt("/compact")).toEqual({ stopReason: "end_turn" });
    } finally {
      await editor.close();
    }
    const updates = editor.updates.map((notification: SessionNotification) => notification.update);
    expect(updates).toContainEqual({
      sessionUpdate: "available_commands_update",
      availableCommands: [expect.objectContaining({ name: "compact" })],
    });
    const said = updates
      .flatMap((update) =>
        update.sessionUpdate === "agent_message_chunk" && update.content.type === "text"
          ? [update.content.text]
          : [],
      )
      .join("");
    expect(said).toMatch(/Compacted: \d+ → \d+ tokens? of context\./);
    expect(await compactions(sessionId)).toBe(1);
  });
});
