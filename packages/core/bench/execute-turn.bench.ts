import { bench, describe } from "vitest";
import { InMemoryFileStore } from "../src/in-memory/in-memory-file-store.js";
import { inMemorySessionStores } from "../src/in-memory/in-memory-session-stores.js";
import { AgentCatalog, AgentService } from "../src/index.js";
import { ScriptedLlmProvider } from "../src/testing/scripted-llm-provider.js";

// The pipeline's own cost per turn (no network, no SQL): composition, lease, persistence calls, validation.
const created = AgentCatalog.create({
  conversationContexts: [{ id: "default", bootPrompt: "You are Aptix.", model: "m", provider: "scripted" }],
  modes: [
    { id: "general", displayName: "General", instructions: "", tools: ["read_file"], toolChoice: null },
  ],
  clientTools: [{ name: "read_file", description: "Read.", parameters: { type: "object" } }],
});
if (!created.successful) throw new Error(created.errors[0].message);
const catalog = created.result;

function service(provider: ScriptedLlmProvider): AgentService {
  return new AgentService({
    catalog,
    providers: [provider],
    store: inMemorySessionStores(),
    files: new InMemoryFileStore(),
  });
}

describe("AgentService.execute", () => {
  const provider = new ScriptedLlmProvider({ id: "scripted" });
  const agent = service(provider);
  let turn = 0;
  bench("one text turn in a growing session", async () => {
    provider.enqueue({ text: "Answer." });
    await agent.execute({ sessionId: "s", turnId: `t${turn++}`, instruction: "Question?" }, "p");
  });

  const toolProvider = new ScriptedLlmProvider({ id: "scripted" });
  const toolAgent = service(toolProvider);
  let toolTurn = 0;
  bench("a client tool round trip (two requests)", async () => {
    const turnId = `t${toolTurn++}`;
    toolProvider.enqueue(
      { toolCalls: [{ name: "read_file", arguments: { path: "a" }, callId: `c${turnId}` }] },
      { text: "Done." },
    );
    await toolAgent.execute({ sessionId: "s", turnId, instruction: "Read a." }, "p");
    await toolAgent.execute(
      {
        sessionId: "s",
        turnId,
        toolResults: [{ toolCallId: `c${turnId}`, executionMs: 1, resultJson: "{}" }],
      },
      "p",
    );
  });
});
