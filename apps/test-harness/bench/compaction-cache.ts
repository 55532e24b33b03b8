/**
 * `pnpm bench:compaction-cache`: what a threshold compaction's summarising call costs on Anthropic, from the
 * scripted Messages API's prompt-cache accounting (no timing). The service (AgentService, in-memory stores, the
 * default catalog on Anthropic with a 32,000-token window, the real AnthropicMessagesProvider over loopback HTTP)
 * runs 40 turns; in each the model reads a file of about 1,800 tokens (a client tool round), then answers. Every
 * summarising call's input is split as the API bills it: at the full price, written to the cache (×1.25), read
 * from it (×0.1). Prints a Markdown table for docs/turn-cost.md.
 */
import { AgentCatalog, AgentService } from "@aptix/core";
import { InMemoryFileStore, inMemorySessionStores } from "@aptix/core/testing";
import { AnthropicMessagesProvider } from "@aptix/llm-anthropic";
import { DEFAULT_CATALOG } from "@aptix/server";
import {
  type AnthropicRecordedRequest,
  type AnthropicStepObject,
  anthropicStep,
  startScriptedAnthropic,
} from "@aptix/testing-llm-servers";

const TURNS = 40;
const WINDOW = 32_000;
const SUMMARISE = "Summarise the conversation above";
/** Anthropic's price of a cache write and of a cache read, as a multiple of the input price. */
const WRITE_PRICE = 1.25;
const READ_PRICE = 0.1;

const source = (turn: number) =>
  Array.from({ length: 160 }, (_, line) => `export const m${turn}_${line} = ${line} * ${turn};`).join("\n");

async function main(): Promise<void> {
  const harness = await startScriptedAnthropic();
  harness.setContextWindow(WINDOW);
  let ids = 0;
  // The model: a summary when asked for one, a final answer once it read the file, else a read_file call.
  const model = (request: AnthropicRecordedRequest): AnthropicStepObject => {
    harness.enqueue(model);
    const messages = (request.body as { messages: Array<{ content: unknown }> }).messages;
    if (JSON.stringify(messages.at(-1)).includes(SUMMARISE))
      return anthropicStep.text(
        "Goals: change every module. Files touched: src/module*.ts. Open: the next one.",
      );
    if (JSON.stringify(messages.at(-1)?.content).includes('"tool_result"'))
      return anthropicStep.text("Done: the module reads as expected.");
    return anthropicStep.toolUse({
      id: `toolu_${++ids}`,
      name: "read_file",
      input: { path: "src/module.ts", startLine: null, endLine: null },
    });
  };
  harness.enqueue(model);
  const created = AgentCatalog.create({
    ...DEFAULT_CATALOG,
    conversationContexts: DEFAULT_CATALOG.conversationContexts.map((context) => ({
      ...context,
      provider: "anthropic",
      model: "claude-sonnet-5",
      contextWindowTokens: WINDOW,
    })),
  });
  if (!created.successful) throw new Error(created.errors[0].message);
  const agent = new AgentService({
    catalog: created.result,
    providers: [new AnthropicMessagesProvider({ apiKey: "bench", baseURL: harness.baseUrl, maxRetries: 0 })],
    store: inMemorySessionStores(),
    files: new InMemoryFileStore(),
  });
  for (let turn = 1; turn <= TURNS; turn++) {
    const turnId = `t${turn}`;
    const asked = await agent.execute(
      { sessionId: "bench", turnId, instruction: `Change module ${turn}.` },
      "bench",
    );
    if (!asked.successful || asked.result.kind !== "client_tool_continuation")
      throw new Error(`turn ${turn}: ${JSON.stringify(asked)}`);
    const done = await agent.execute(
      {
        sessionId: "bench",
        turnId,
        toolResults: asked.result.toolCalls.map((call) => ({
          toolCallId: call.toolCallId,
          executionMs: 1,
          resultJson: JSON.stringify({ contents: source(turn) }),
        })),
      },
      "bench",
    );
    if (!done.successful) throw new Error(`turn ${turn}: ${JSON.stringify(done)}`);
  }
  const summaries = harness
    .messageRequests()
    .filter((request) => JSON.stringify(request.body).includes(SUMMARISE))
    .map((request) => {
      const usage = (request.answer?.body as { usage?: Record<string, number> } | undefined)?.usage ?? {};
      const input = usage.input_tokens ?? 0;
      const written = usage.cache_creation_input_tokens ?? 0;
      const read = usage.cache_read_input_tokens ?? 0;
      return { input, written, read, total: input + written + read };
    });
  await harness.close();
  console.log(`${TURNS} turns, a read_file output of about 1,800 tokens each, a ${WINDOW}-token window\n`);
  console.log(
    "| compaction | input | at full price | written (×1.25) | read (×0.1) | full price share | priced as input |",
  );
  console.log("|---|---|---|---|---|---|---|");
  for (const [index, call] of summaries.entries()) {
    const priced = call.input + WRITE_PRICE * call.written + READ_PRICE * call.read;
    console.log(
      `| ${index + 1} | ${call.total} | ${call.input} | ${call.written} | ${call.read} | ${((100 * call.input) / call.total).toFixed(1)} % | ${priced.toFixed(0)} (${((100 * priced) / call.total).toFixed(1)} %) |`,
    );
  }
}

await main();
