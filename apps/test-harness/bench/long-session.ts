/**
 * `pnpm bench:long-session`: what compaction does to a long coding session (docs/context-window.md). The service
 * (AgentService, in-memory stores, the default catalog on OpenAI, the real OpenAIResponsesProvider over loopback
 * HTTP) runs 100 turns; in each the model reads a file whose contents are 20,000 characters, then answers. The
 * scripted Responses API counts every request's context (o200k, as it referees windows).
 *
 * - before: the window the service believes in is far larger than the model's, so it never compacts: what the
 *   service sent before compaction existed. The scripted API refuses nothing, so the figures show what would have
 *   been sent; a real 32k model refuses every call past its window, and every later turn of the session with it.
 * - after: a 32,000-token window on both sides: the API refuses any call past it.
 *
 * Prints the tokens of context per call (first, median, last, largest), the calls past 32k, and the compactions.
 */
import { AgentCatalog, AgentService } from "@aptix/core";
import { InMemoryFileStore, inMemorySessionStores } from "@aptix/core/testing";
import { OpenAIResponsesProvider } from "@aptix/llm-openai";
import { DEFAULT_CATALOG } from "@aptix/server";
import { type RecordedRequest, type StepObject, startScriptedOpenAI, step } from "@aptix/testing-llm-servers";

const TURNS = 100;
const WINDOW = 32_000;
const OUTPUT_CHARS = 20_000;

/** A source file of about `OUTPUT_CHARS` characters, different for each turn. */
const file = (turn: number) =>
  Array.from(
    { length: Math.ceil(OUTPUT_CHARS / 60) },
    (_, line) => `export const v${turn}_${line} = ${line * turn};`,
  )
    .join("\n")
    .slice(0, OUTPUT_CHARS);

async function session(serviceWindow: number, modelWindow: number | undefined) {
  const openai = await startScriptedOpenAI();
  openai.setContextWindow(modelWindow);
  // The model: a summary when asked for one, a final answer once it read the file, else a read_file call.
  const model = (request: RecordedRequest): StepObject => {
    openai.enqueue(model);
    const input = (request.body as { input: Array<Record<string, unknown>> }).input;
    if (JSON.stringify(input).includes("Summarise the conversation above"))
      return step.text(
        "Goals: keep changing the modules. Files touched: src/module*.ts. Open tasks: the next module.",
      );
    if (input.at(-1)?.type === "function_call_output")
      return step.text("Done: the module reads as expected.");
    return step.functionCalls({
      name: "read_file",
      arguments: { path: "src/module.ts", startLine: null, endLine: null },
    });
  };
  openai.enqueue(model);
  const created = AgentCatalog.create({
    ...DEFAULT_CATALOG,
    conversationContexts: DEFAULT_CATALOG.conversationContexts.map((context) => ({
      ...context,
      contextWindowTokens: serviceWindow,
    })),
  });
  if (!created.successful) throw new Error(created.errors[0].message);
  const agent = new AgentService({
    catalog: created.result,
    providers: [new OpenAIResponsesProvider({ apiKey: "bench", baseURL: openai.baseUrl, maxRetries: 0 })],
    store: inMemorySessionStores(),
    files: new InMemoryFileStore(),
  });
  let failed = 0;
  for (let turn = 1; turn <= TURNS; turn++) {
    const turnId = `t${turn}`;
    const asked = await agent.execute(
      { sessionId: "bench", turnId, instruction: `Change module ${turn}.` },
      "bench",
    );
    if (!asked.successful) {
      failed++;
      continue;
    }
    if (asked.result.kind !== "client_tool_continuation") continue;
    const done = await agent.execute(
      {
        sessionId: "bench",
        turnId,
        toolResults: asked.result.toolCalls.map((call) => ({
          toolCallId: call.toolCallId,
          executionMs: 1,
          resultJson: JSON.stringify({ contents: file(turn) }),
        })),
      },
      "bench",
    );
    if (!done.successful) failed++;
  }
  const summary = await agent.getSession("bench", "bench");
  const compactions = summary.successful ? summary.result.compactions.length : Number.NaN;
  // The calls of the conversation (not the summaries), in order, with the context each sent.
  const sent = openai
    .responseRequests()
    .filter((request) => !JSON.stringify(request.body).includes("Summarise the conversation above"))
    .map((request) => request.contextTokens ?? 0);
  await openai.close();
  const sorted = [...sent].sort((a, b) => a - b);
  return {
    calls: sent.length,
    first: sent[0],
    median: sorted[Math.floor(sorted.length / 2)],
    last: sent.at(-1),
    largest: sorted.at(-1),
    pastWindow: sent.filter((tokens) => tokens > WINDOW).length,
    compactions,
    failedTurns: failed,
  };
}

async function main(): Promise<void> {
  const before = await session(100_000_000, undefined);
  const after = await session(WINDOW, WINDOW);
  console.log(
    `${TURNS} turns, a ${OUTPUT_CHARS}-character read_file output each, a ${WINDOW}-token window\n`,
  );
  console.log("| | calls | first | median | last | largest | calls past 32k | compactions | failed turns |");
  console.log("|---|---|---|---|---|---|---|---|---|");
  for (const [name, row] of [
    ["before (no compaction)", before],
    ["after", after],
  ] as const) {
    console.log(
      `| ${name} | ${row.calls} | ${row.first} | ${row.median} | ${row.last} | ${row.largest} | ${row.pastWindow} | ${row.compactions} | ${row.failedTurns} |`,
    );
  }
}

await main();
