/**
 * `pnpm bench:prompt-cache`: what the Anthropic prompt-cache breakpoints save on a 30-turn session (docs/http-api.md),
 * from the scripted Messages API's cache accounting. The service (AgentService, in-memory stores, the default
 * catalog on Anthropic, the real AnthropicMessagesProvider over loopback HTTP) runs a scripted coding session:
 * every third turn the model reads a file (a client tool round), the others it answers in a paragraph. Then the
 * same requests, their breakpoints taken out, go to a fresh scripted server: without breakpoints the API bills
 * the whole prompt at the full price. Prints a Markdown table for docs/turn-cost.md.
 */
import Anthropic from "@anthropic-ai/sdk";
import type { MessageCreateParamsNonStreaming } from "@anthropic-ai/sdk/resources/messages";
import { AgentCatalog, AgentService } from "@aptix/core";
import { InMemoryFileStore, inMemorySessionStores } from "@aptix/core/testing";
import { AnthropicMessagesProvider } from "@aptix/llm-anthropic";
import { DEFAULT_CATALOG } from "@aptix/server";
import {
  type AnthropicRecordedRequest,
  anthropicStep,
  startScriptedAnthropic,
} from "@aptix/testing-llm-servers";

const TURNS = 30;
const MODEL = "claude-sonnet-5";
/** Anthropic's price of a cache write and of a cache read, as a multiple of the input price. */
const WRITE_PRICE = 1.25;
const READ_PRICE = 0.1;

interface CallUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

const answer = (turn: number) =>
  `Turn ${turn}: the change is in place. I kept the public signature, moved the parsing into its own ` +
  `function, and added a test for the empty input, which used to throw. The other callers need nothing; ` +
  `the one in src/cli.ts now passes its options object through unchanged.`;
const file = (turn: number) =>
  Array.from(
    { length: 40 },
    (_, line) => `export function step${turn}_${line}(value: number): number { return value * ${line + 1}; }`,
  ).join("\n");

function usageOf(request: AnthropicRecordedRequest): CallUsage {
  const usage = (request.answer?.body as { usage?: CallUsage } | undefined)?.usage;
  if (!usage) throw new Error(`request #${request.index} got no usage`);
  return usage;
}

/** A body without its `cache_control` markers: what the adapter sent before it set breakpoints. */
function withoutBreakpoints(body: unknown): MessageCreateParamsNonStreaming {
  return JSON.parse(JSON.stringify(body), (key, value) => (key === "cache_control" ? undefined : value));
}

async function main(): Promise<void> {
  const harness = await startScriptedAnthropic();
  const created = AgentCatalog.create({
    ...DEFAULT_CATALOG,
    conversationContexts: DEFAULT_CATALOG.conversationContexts.map((context) => ({
      ...context,
      provider: "anthropic",
      model: MODEL,
    })),
  });
  if (!created.successful) throw new Error(created.errors[0].message);
  const agent = new AgentService({
    catalog: created.result,
    providers: [new AnthropicMessagesProvider({ apiKey: "bench", baseURL: harness.baseUrl, maxRetries: 0 })],
    store: inMemorySessionStores(),
    files: new InMemoryFileStore(),
  });

  /** The requests of each turn, by turn. */
  const turns: AnthropicRecordedRequest[][] = [];
  for (let turn = 1; turn <= TURNS; turn++) {
    const before = harness.messageRequests().length;
    const turnId = `t${turn}`;
    const instruction = `Please make change ${turn} in src/module${turn}.ts and tell me what you did.`;
    if (turn % 3 === 0) {
      harness.enqueue(
        anthropicStep.toolUse({
          id: `toolu_${turn}`,
          name: "read_file",
          input: { path: `src/module${turn}.ts`, startLine: null, endLine: null },
        }),
        anthropicStep.text(answer(turn)),
      );
      const asked = await agent.execute({ sessionId: "bench", turnId, instruction }, "bench");
      if (!asked.successful || asked.result.kind !== "client_tool_continuation") {
        throw new Error(`turn ${turn}: ${JSON.stringify(asked)}`);
      }
      const done = await agent.execute(
        {
          sessionId: "bench",
          turnId,
          toolResults: [
            {
              toolCallId: `toolu_${turn}`,
              executionMs: 3,
              resultJson: JSON.stringify({ path: `src/module${turn}.ts`, contents: file(turn) }),
            },
          ],
        },
        "bench",
      );
      if (!done.successful) throw new Error(`turn ${turn}: ${JSON.stringify(done)}`);
    } else {
      harness.enqueue(anthropicStep.text(answer(turn)));
      const done = await agent.execute({ sessionId: "bench", turnId, instruction }, "bench");
      if (!done.successful) throw new Error(`turn ${turn}: ${JSON.stringify(done)}`);
    }
    turns.push(harness.messageRequests().slice(before));
  }

  // The same requests without breakpoints, to a server with an empty cache: the accounting of the old adapter.
  const plain = await startScriptedAnthropic();
  const client = new Anthropic({ apiKey: "bench", baseURL: plain.baseUrl, maxRetries: 0 });
  const fullPrice: number[] = [];
  for (const requests of turns) {
    let tokens = 0;
    for (const request of requests) {
      plain.enqueue(anthropicStep.text("ok"));
      tokens += (await client.messages.create(withoutBreakpoints(request.body))).usage.input_tokens;
    }
    fullPrice.push(tokens);
  }

  const rows = turns.map((requests, index) => {
    const usage = requests.map(usageOf);
    const sum = (pick: (call: CallUsage) => number) => usage.reduce((total, call) => total + pick(call), 0);
    return {
      turn: index + 1,
      calls: requests.length,
      before: fullPrice[index] ?? 0,
      input: sum((call) => call.input_tokens),
      written: sum((call) => call.cache_creation_input_tokens),
      read: sum((call) => call.cache_read_input_tokens),
    };
  });
  const total = (pick: (row: (typeof rows)[number]) => number) =>
    rows.reduce((sum, row) => sum + pick(row), 0);
  const billed = (row: { input: number; written: number; read: number }) =>
    row.input + WRITE_PRICE * row.written + READ_PRICE * row.read;

  console.log(
    "| turn | calls | before: input at full price | after: input at full price | after: cache writes | after: cache reads | after, priced as input |",
  );
  console.log("|---|---|---|---|---|---|---|");
  for (const row of rows) {
    console.log(
      `| ${row.turn} | ${row.calls} | ${row.before} | ${row.input} | ${row.written} | ${row.read} | ${billed(row).toFixed(1)} |`,
    );
  }
  const totals = {
    before: total((row) => row.before),
    input: total((row) => row.input),
    written: total((row) => row.written),
    read: total((row) => row.read),
  };
  console.log(
    `| all | ${total((row) => row.calls)} | ${totals.before} | ${totals.input} | ${totals.written} | ${totals.read} | ${billed(totals).toFixed(1)} |`,
  );
  console.log(
    `\nbefore: ${totals.before} input tokens at full price; after: ${totals.input} at full price, ${totals.written} written (×${WRITE_PRICE}), ${totals.read} read (×${READ_PRICE}): ${billed(totals).toFixed(1)} full-price equivalents, ${((100 * billed(totals)) / totals.before).toFixed(1)} % of before`,
  );
  await Promise.all([harness.close(), plain.close()]);
}

await main();
