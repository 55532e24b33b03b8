import { step } from "@aptix/testing-llm-servers";
import { describe, expect, it } from "vitest";
import { API_KEY } from "./support/aptix-server.js";
import { openTerminal } from "./support/open-terminal.js";
import { turnStatuses } from "./support/turn-statuses.js";
import { useAptixServer } from "./support/use-aptix-server.js";
import { makeWorkspace, workspaceIdOf } from "./support/workspace-dir.js";

/** `aptix` in a real pseudo-terminal (node-pty): what a person at a terminal sees and types. */
const aptix = useAptixServer();

/** A terminal running `aptix <args>` against the file's server. */
const inTerminal = (args: string[], cwd: string) => openTerminal(aptix.server.url, args, cwd);

describe("aptix chat in a terminal", () => {
  it("streams the answer, shows a line per tool call and a coloured diff, asks, applies, and goes on", async () => {
    const workspace = await makeWorkspace("chat-shop", { "src/price.ts": "export const PRICE = 10;\n" });
    const patch = [
      "--- a/src/price.ts",
      "+++ b/src/price.ts",
      "@@ -1 +1 @@",
      "-export const PRICE = 10;",
      "+export const PRICE = 12;",
      "",
    ].join("\n");
    aptix.openai.script(
      step.functionCalls(
        { name: "read_file", arguments: { path: "src/price.ts", startLine: null, endLine: null } },
        { text: "Reading the price." },
      ),
      step.functionCalls({ name: "apply_patch", arguments: { patch } }),
      step.text(["The price ", "is now 12."]),
      step.text("You are welcome."),
    );
    const chat = inTerminal(["chat"], workspace.dir);
    try {
      await chat.waitFor("> ");
      chat.type("Raise the price to 12\r");
      await chat.waitFor("Apply this patch? [y/N]");
      chat.type("y\r");
      await chat.waitFor("The price is now 12.");
      const firstTurn = chat.text().length;
      chat.type("Thanks\r");
      await chat.waitFor("You are welcome.", firstTurn);
      chat.type("/exit\r");
      expect(await chat.exited).toBe(0);
    } finally {
      chat.kill();
    }
    expect(await workspace.read("src/price.ts")).toBe("export const PRICE = 12;\n");
    const text = chat.text();
    expect(text).toContain("Reading the price.");
    expect(text).toMatch(/tool read_file src\/price\.ts ✓/);
    expect(text).toMatch(/tool apply_patch ✓/);
    // Colour on a terminal: the added line green, the removed one red.
    expect(chat.raw()).toContain("\u001b[32m+export const PRICE = 12;");
    expect(chat.raw()).toContain("\u001b[31m-export const PRICE = 10;");
    // The second turn continued the first one's session: the model was asked to go on from its last answer.
    const [, , third, fourth] = aptix.openai.responseRequests();
    expect(third?.answer?.responseId).toEqual(expect.any(String));
    expect(fourth?.body).toMatchObject({ previous_response_id: third?.answer?.responseId });
  });

  it("Ctrl-C mid-turn cancels the turn on the service and is back at the prompt, the next line working", async () => {
    const workspace = await makeWorkspace("chat-cancel", { "a.txt": "a\n" });
    aptix.openai.script(step.text("Never delivered.", { delayMs: 120_000 }), step.text("Next answer."));
    const chat = inTerminal(["chat", "--session", "cancel-me"], workspace.dir);
    try {
      await chat.waitFor("> ");
      const calls = aptix.openai.responseRequests().length;
      chat.type("Take forever\r");
      for (let waited = 0; aptix.openai.responseRequests().length === calls; waited += 20) {
        if (waited > 30_000) throw new Error("the provider was never called");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const promptsBefore = chat.text().split("> ").length;
      const pressedAt = Date.now();
      chat.type("\x03");
      await chat.waitFor("Stopped.");
      for (let waited = 0; chat.text().split("> ").length <= promptsBefore; waited += 20) {
        if (waited > 3_000) throw new Error(`no prompt within 3 s:\n${chat.text()}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(Date.now() - pressedAt).toBeLessThan(3_000);
      expect(await turnStatuses(aptix.server.url, "cancel-me")).toEqual(["cancelled"]);
      const afterCancel = chat.text().length;
      chat.type("Go on\r");
      await chat.waitFor("Next answer.", afterCancel);
      chat.type("/exit\r");
      await chat.exited;
    } finally {
      chat.kill();
    }
  });

  it("Ctrl-C at the patch's question answers it at once: the turn is cancelled, no file changes, the chat goes on", async () => {
    const workspace = await makeWorkspace("chat-cancel-ask", { "a.txt": "a\n" });
    const patch = ["--- a/a.txt", "+++ b/a.txt", "@@ -1 +1 @@", "-a", "+b", ""].join("\n");
    aptix.openai.script(
      step.functionCalls({ name: "apply_patch", arguments: { patch } }),
      step.text("Next answer."),
    );
    const chat = inTerminal(["chat", "--session", "cancel-at-ask"], workspace.dir);
    try {
      await chat.waitFor("> ");
      chat.type("Change a\r");
      await chat.waitFor("Apply this patch? [y/N]");
      // No Enter: Ctrl-C alone answers the question and stops the turn.
      chat.type("\x03");
      await chat.waitFor("Stopped.");
      const afterCancel = chat.text().length;
      chat.type("Go on\r");
      await chat.waitFor("Next answer.", afterCancel);
      chat.type("/exit\r");
      expect(await chat.exited).toBe(0);
    } finally {
      chat.kill();
    }
    expect(await turnStatuses(aptix.server.url, "cancel-at-ask")).toEqual(["cancelled", "completed"]);
    expect(await workspace.read("a.txt")).toBe("a\n");
  });

  it("shows a patch's hiding escapes as text, in colour, so every line of it is there to approve", async () => {
    const workspace = await makeWorkspace("chat-escapes", { "a.txt": "one\ntwo\n" });
    const hiding = "\u001b[1A\u001b[2K";
    const patch = [
      "--- a/a.txt",
      "+++ b/a.txt",
      "@@ -1,2 +1,3 @@",
      " one",
      `+three${hiding}${hiding}`,
      " two",
      "",
    ];
    aptix.openai.script(
      step.functionCalls({ name: "apply_patch", arguments: { patch: patch.join("\n") } }),
      step.text("\u001b]0;pwned\u0007Declined."),
    );
    const chat = inTerminal(["chat"], workspace.dir);
    try {
      await chat.waitFor("> ");
      chat.type("Add three\r");
      await chat.waitFor("Apply this patch? [y/N]");
      chat.type("n\r");
      await chat.waitFor("Declined.");
      chat.type("/exit\r");
      expect(await chat.exited).toBe(0);
    } finally {
      chat.kill();
    }
    expect(chat.raw()).not.toContain(hiding);
    expect(chat.raw()).not.toContain("\u001b]0;");
    expect(chat.raw()).toContain("\u001b[32m+three\\x1b[1A\\x1b[2K\\x1b[1A\\x1b[2K");
    expect(chat.text()).toMatch(/ one\r?\n.*\+three.*\r?\n two/);
    expect(chat.text()).toContain("\\x1b]0;pwned\\x07Declined.");
    expect(await workspace.read("a.txt")).toBe("one\ntwo\n");
  });

  it("with --yes, applies a patch unasked but asks about one that changes a file run when the project is opened", async () => {
    const workspace = await makeWorkspace("chat-hooks", { "a.txt": "a\n" });
    const creating = (path: string, line: string) =>
      ["--- /dev/null", `+++ b/${path}`, "@@ -0,0 +1 @@", `+${line}`, ""].join("\n");
    aptix.openai.script(
      step.functionCalls({ name: "apply_patch", arguments: { patch: creating("notes.md", "notes") } }),
      step.functionCalls({ name: "apply_patch", arguments: { patch: creating(".envrc", "export X=1") } }),
      step.text("Both written."),
    );
    const chat = inTerminal(["chat", "--yes"], workspace.dir);
    try {
      await chat.waitFor("> ");
      chat.type("Add notes and an envrc\r");
      await chat.waitFor("Apply this patch? [y/N]");
      // Asked once: the first patch was written without asking.
      expect(chat.text().split("Apply this patch?")).toHaveLength(2);
      expect(await workspace.read("notes.md")).toBe("notes\n");
      expect(chat.text()).toContain(
        "This patch changes files that run code when an editor or a tool opens the project (.envrc): aptix asks every time, even with --yes.",
      );
      chat.type("y\r");
      await chat.waitFor("Both written.");
      chat.type("/exit\r");
      expect(await chat.exited).toBe(0);
    } finally {
      chat.kill();
    }
    expect(await workspace.read(".envrc")).toBe("export X=1\n");
  });

  it("/clear clears the screen and starts a new session: the next turn continues nothing", async () => {
    const workspace = await makeWorkspace("chat-clear", { "a.txt": "a\n" });
    aptix.openai.script(step.text("First answer."), step.text("Fresh answer."));
    const before = aptix.openai.responseRequests().length;
    const chat = inTerminal(["chat"], workspace.dir);
    try {
      await chat.waitFor("> ");
      chat.type("Remember 42\r");
      await chat.waitFor("First answer.");
      const from = chat.text().length;
      chat.type("/clear\r");
      await chat.waitFor("session ", from);
      chat.type("What did I say?\r");
      await chat.waitFor("Fresh answer.", from);
      chat.type("/exit\r");
      expect(await chat.exited).toBe(0);
    } finally {
      chat.kill();
    }
    // The screen was cleared (cursor home, then erase below) before the new session's line.
    const cleared = chat.raw().lastIndexOf("\u001b[1;1H\u001b[0J");
    expect(cleared).toBeGreaterThan(-1);
    expect(chat.raw().slice(cleared)).toMatch(/session [0-9a-f-]{36}/);
    const [, second] = aptix.openai.responseRequests().slice(before);
    expect(second?.body).not.toHaveProperty("previous_response_id");
  });

  it("shows a spinner while the model thinks, and takes it away before the answer", async () => {
    const workspace = await makeWorkspace("chat-spinner", { "a.txt": "a\n" });
    aptix.openai.script(step.text("Thought it over.", { delayMs: 1_000 }));
    const chat = inTerminal(["chat"], workspace.dir);
    try {
      await chat.waitFor("> ");
      const from = chat.raw().length;
      chat.type("Think\r");
      await chat.waitFor("Thought it over.");
      chat.type("/exit\r");
      expect(await chat.exited).toBe(0);
      const turn = chat.raw().slice(from);
      // Frames drawn at the line's start, then the line cleared before the first text.
      expect(turn).toMatch(/\r[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] /);
      expect(turn.lastIndexOf("\r\u001b[K")).toBeLessThan(turn.indexOf("Thought it over."));
    } finally {
      chat.kill();
    }
    // With --json a script reads the output: no spinner, even on a terminal.
    aptix.openai.script(step.text("Thought again.", { delayMs: 1_000 }));
    const json = inTerminal(["run", "Think", "--json"], workspace.dir);
    try {
      expect(await json.exited).toBe(0);
    } finally {
      json.kill();
    }
    expect(json.raw()).toContain("Thought again.");
    expect(json.raw()).not.toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/);
  });

  it("chat --continue shows the session's last messages before the prompt", async () => {
    const workspace = await makeWorkspace("chat-continue", { "a.txt": "a\n" });
    aptix.openai.script(step.text("The budget is noted."));
    const first = inTerminal(["chat"], workspace.dir);
    try {
      await first.waitFor("> ");
      first.type("The budget is 42\r");
      await first.waitFor("The budget is noted.");
      first.type("/exit\r");
      expect(await first.exited).toBe(0);
    } finally {
      first.kill();
    }
    const again = inTerminal(["chat", "--continue"], workspace.dir);
    try {
      await again.waitFor("> ");
      again.type("/exit\r");
      expect(await again.exited).toBe(0);
    } finally {
      again.kill();
    }
    expect(again.text()).toMatch(/Last messages:\s+you: The budget is 42\s+agent: The budget is noted\./);
  });

  it("answers /help, /new, /sessions, /resume and unknown or mistyped commands itself: none reaches the model", async () => {
    const workspace = await makeWorkspace("chat-commands", { "a.txt": "a\n" });
    const before = aptix.openai.responseRequests().length;
    aptix.openai.script(step.text("First answer."), step.text("Fresh answer."), step.text("Resumed answer."));
    const chat = inTerminal(["chat"], workspace.dir);
    let fresh = "";
    let first = "";
    try {
      await chat.waitFor("> ");
      chat.type("/help\r");
      await chat.waitFor("stop the running turn");
      expect(chat.text()).toMatch(/\/help +list these commands/);
      expect(chat.text()).toMatch(/\/new +start a new session/);
      expect(chat.text()).toMatch(/\/resume <id> +go on with the session/);
      expect(chat.text()).toMatch(/\/sessions \[all\] +list this workspace's/);
      chat.type("/frobnicate now\r");
      await chat.waitFor("Unknown command /frobnicate. Nothing was sent; /help lists the commands.");
      chat.type("/new please\r");
      await chat.waitFor("/new takes no argument.");
      expect(aptix.openai.responseRequests()).toHaveLength(before);

      chat.type("Hello\r");
      await chat.waitFor("First answer.");
      // The workspace was never indexed: the warning names the fix.
      await chat.waitFor("To index it, run: aptix index");
      const afterFirst = chat.text().length;
      chat.type("/new\r");
      await chat.waitFor("session ", afterFirst);
      const shown = chat.text().indexOf("session ", afterFirst);
      await chat.waitFor("> ", shown);
      fresh = /session ([0-9a-f-]{36})/.exec(chat.text().slice(shown))?.[1] ?? "";
      expect(fresh).not.toBe("");
      chat.type("Hello again\r");
      await chat.waitFor("Fresh answer.", afterFirst);

      // Both sessions are listed, newest first; /resume goes back to the first, and its next turn continues it.
      first = /aptix chat · session ([0-9a-f-]{36})/.exec(chat.text())?.[1] ?? "";
      expect(first).not.toBe("");
      const afterFresh = chat.text().length;
      chat.type("/sessions\r");
      await chat.waitFor("Hello again", afterFresh);
      const listed = chat.text().slice(afterFresh);
      expect(listed.indexOf(fresh)).toBeGreaterThanOrEqual(0);
      expect(listed.indexOf(fresh)).toBeLessThan(listed.indexOf(first));
      // Only this workspace's: the earlier tests' sessions (chat-clear's, say) appear with /sessions all.
      expect(listed).not.toContain("chat-clear-");
      const beforeAll = chat.text().length;
      chat.type("/sessions all\r");
      await chat.waitFor("chat-clear-", beforeAll);
      chat.type("/resume no-such-session\r");
      await chat.waitFor("SESSION_NOT_FOUND", afterFresh);
      chat.type(`/resume ${first}\r`);
      await chat.waitFor(`session ${first} · 1 turn`, afterFresh);
      chat.type("Back to the first\r");
      await chat.waitFor("Resumed answer.", afterFresh);
      chat.type("/exit\r");
      expect(await chat.exited).toBe(0);
    } finally {
      chat.kill();
    }
    const requests = aptix.openai.responseRequests().slice(before);
    expect(requests).toHaveLength(3);
    const sent = JSON.stringify(requests.map((request) => request.body));
    expect(sent).not.toContain("/help");
    expect(sent).not.toContain("frobnicate");
    // After /new the model starts afresh: nothing continues the first session's answer.
    expect(requests[1]?.body).not.toHaveProperty("previous_response_id");
    // After /resume it continues the first session's conversation.
    expect(requests[2]?.body).toHaveProperty("previous_response_id");
    expect(sent).not.toContain("/resume");
    const session = await fetch(`${aptix.server.url}/v1/sessions/${fresh}`, {
      headers: { authorization: `Bearer ${API_KEY}` },
    }).then((response) => response.json() as Promise<{ result: { turns: unknown[] } }>);
    expect(session.result.turns).toHaveLength(1);
  });

  it("aptix index shows a progress bar", async () => {
    const workspace = await makeWorkspace("bar-shop", { "a.md": "# A\n", "b.md": "# B\n" });
    const index = inTerminal(["index"], workspace.dir);
    expect(await index.exited).toBe(0);
    expect(index.text()).toMatch(/indexing .* 2\/2 files/);
    expect(index.text()).toContain(`Indexed 2 files into workspace ${workspaceIdOf(workspace.dir)}`);
  });
});
