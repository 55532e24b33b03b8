import { AptixClient } from "@aptix/client";
import { step } from "@aptix/testing-llm-servers";
import { afterEach, describe, expect, it } from "vitest";
import { API_KEY } from "./support/aptix-server.js";
import { openTerminal } from "./support/open-terminal.js";
import { useAptixServer } from "./support/use-aptix-server.js";
import { makeWorkspace } from "./support/workspace-dir.js";

/** `/retry` and `/fork` in `aptix chat` (docs/cli.md): a branch of the conversation from the terminal. */
const aptix = useAptixServer(async () => ({}));

afterEach(() => {
  const pending = aptix.openai.pendingSteps();
  aptix.openai.reset();
  expect(pending, "scripted steps left over").toBe(0);
});

const client = () => new AptixClient({ baseUrl: aptix.server.url, apiKey: API_KEY });

describe("aptix chat", () => {
  it("answers the last instruction again on /retry, and goes on in a copy on /fork", async () => {
    const workspace = await makeWorkspace("branches-chat", { "a.txt": "a\n" });
    aptix.openai.script(
      step.text("Blue."),
      step.text("Green, on second thought."),
      step.text("Still green, in the copy."),
    );
    const chat = openTerminal(aptix.server.url, ["chat", "--session", "branches-chat-1"], workspace.dir);
    let forkId = "";
    try {
      await chat.waitFor("> ");
      chat.type("Pick a colour\r");
      await chat.waitFor("Blue.");
      chat.type("/retry\r");
      await chat.waitFor("Green, on second thought.");
      let from = chat.text().length;
      chat.type("/fork\r");
      await chat.waitFor("forked from branches-chat-1", from);
      forkId = /session (\S+) · forked from/.exec(chat.text().slice(from))?.[1] ?? "";
      from = chat.text().length;
      chat.type("And now?\r");
      await chat.waitFor("Still green, in the copy.", from);
      chat.type("/exit\r");
      expect(await chat.exited).toBe(0);
    } finally {
      chat.kill();
    }
    const source = await client().getSession("branches-chat-1");
    expect(source.successful && source.result.turns.map((turn) => turn.status)).toEqual([
      "superseded",
      "completed",
    ]);
    const fork = await client().getSession(forkId);
    expect(fork.successful && fork.result.forkedFrom).toEqual({ sessionId: "branches-chat-1" });
    expect(fork.successful && fork.result.turns).toHaveLength(3);
    // The retried answer was made without the first one in view.
    const second = aptix.openai.responseRequests()[1]?.body as {
      previous_response_id?: string;
      input: unknown;
    };
    expect(JSON.stringify(second)).not.toContain("Blue.");
    expect(second.previous_response_id).toBeUndefined();
  });
});
