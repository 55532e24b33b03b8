/**
 * Cheaper replays (docs/http-api.md) over real HTTP: the Anthropic adapter's prompt-cache breakpoints and OpenAI's
 * `prompt_cache_key`, judged by the scripted servers, whose prompt caches account for reads as the real APIs do.
 * The boot prompt is long enough (over 1,024 tokens) for the providers to cache it.
 */
import { anthropicStep, step } from "@aptix/testing-llm-servers";
import { describe, expect, it } from "vitest";
import {
  BOOT_PROMPT,
  expectContinuation,
  expectFinal,
  expectOk,
  PROVIDER_CONTEXTS,
  PROVIDERS_CATALOG,
  toolContinuation,
  uniqueId,
  userTurn,
} from "../../src/e2e/index.js";
import { setUpBothProviders } from "../support/both-providers.js";

const LONG_BOOT_PROMPT = [
  BOOT_PROMPT,
  ...Array.from(
    { length: 200 },
    (_, k) => `House rule ${k}: keep answers short and name the files you touch.`,
  ),
].join("\n");

const CACHING_CATALOG = {
  ...PROVIDERS_CATALOG,
  conversationContexts: PROVIDERS_CATALOG.conversationContexts.map((context) => ({
    ...context,
    bootPrompt: LONG_BOOT_PROMPT,
  })),
};

type SentBody = { tools: unknown[]; messages: Array<{ content: unknown[] }>; prompt_cache_key?: string };
/** The usage a provider answered a recorded request with (its JSON body: no request here streams). */
function usageOf<T>(request: { answer?: { body?: unknown } } | undefined): T {
  const body = request?.answer?.body as { usage?: T } | undefined;
  if (body?.usage === undefined) throw new Error("the provider answered no usage");
  return body.usage;
}

type AnthropicUsage = {
  input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
};

describe("prompt caching", () => {
  const providers = setUpBothProviders({ catalog: CACHING_CATALOG });

  it("Anthropic: breakpoints on the system block, the last tool and the last message; the cache reads show in usage", async () => {
    const sessionId = uniqueId("cache-anthropic");
    const extra = { conversationContextId: PROVIDER_CONTEXTS.anthropic };
    providers.anthropic.enqueue(
      anthropicStep.toolUse({ id: "toolu_cache_1", name: "read_file", input: { path: "src/a.ts" } }),
      anthropicStep.text("It exports nothing."),
      anthropicStep.text("You are welcome."),
    );
    const paused = expectContinuation(
      await providers.service.post(userTurn(sessionId, "t1", "Read src/a.ts", extra)),
    );
    const first = expectFinal(
      await providers.service.post(
        toolContinuation(sessionId, "t1", [
          { toolCallId: paused.toolCalls[0]?.toolCallId ?? "", resultJson: JSON.stringify("export {};") },
        ]),
      ),
    );
    const second = expectFinal(await providers.service.post(userTurn(sessionId, "t2", "Thanks", extra)));

    const sent = providers.anthropic.messageRequests();
    expect(sent).toHaveLength(3);
    expect(sent.map((request) => request.cacheBreakpoints)).toEqual(
      sent.map((request) => {
        const body = request.body as SentBody;
        const last = body.messages.length - 1;
        return [
          `tools[${body.tools.length - 1}]`,
          "system[0]",
          `messages[${last}].content[${(body.messages[last]?.content.length ?? 0) - 1}]`,
        ];
      }),
    );
    const usage = sent.map((request) => usageOf<AnthropicUsage>(request));
    // The first call writes its whole prompt; each later one reads what the call before it sent.
    expect(usage.map((call) => call.cache_read_input_tokens)).toEqual([
      0,
      sent[0]?.contextTokens,
      sent[1]?.contextTokens,
    ]);
    // Every call's prompt ends at its last breakpoint: nothing of it is billed at the full price.
    expect(usage.map((call) => call.input_tokens)).toEqual([0, 0, 0]);

    // The turns' usage counts the reads as cached input, within an input count that is the whole prompt.
    const read = usage.map((call) => call.cache_read_input_tokens);
    expect(first.usage).toMatchObject({
      cachedInputTokens: (read[0] ?? 0) + (read[1] ?? 0),
      inputTokens: (sent[0]?.contextTokens ?? 0) + (sent[1]?.contextTokens ?? 0),
      llmCalls: 2,
    });
    expect(second.usage).toMatchObject({ cachedInputTokens: read[2], inputTokens: sent[2]?.contextTokens });
    const session = expectOk(await providers.service.session(sessionId));
    expect(session.turns.map((turn) => turn.usage)).toEqual([first.usage, second.usage]);
  });

  it("OpenAI: one prompt_cache_key for every call of a session, another for another session or principal", async () => {
    const [one, two] = [uniqueId("cache-openai"), uniqueId("cache-openai")];
    const extra = { conversationContextId: PROVIDER_CONTEXTS.openai };
    providers.openai.enqueue(...["One.", "Two.", "Three.", "Four."].map((text) => step.text(text)));
    expectFinal(await providers.service.post(userTurn(one, "t1", "Hello", extra)));
    const again = expectFinal(await providers.service.post(userTurn(one, "t2", "Hello again", extra)));
    expectFinal(await providers.service.post(userTurn(two, "t1", "Hello", extra)));
    // Bob's session of the same id is another session.
    expectFinal(await providers.service.post(userTurn(one, "t1", "Hello", extra), "bob"));

    const sent = providers.openai.responseRequests();
    const keys = sent.map((request) => (request.body as SentBody).prompt_cache_key);
    expect(keys[0]).toEqual(expect.any(String));
    expect(keys[1]).toBe(keys[0]);
    expect(new Set(keys).size).toBe(3);
    // No principal or session id reaches the provider.
    for (const key of keys) {
      expect(key).not.toContain("alice");
      expect(key).not.toContain("bob");
      expect(key).not.toContain(one);
      expect(key?.length).toBeLessThanOrEqual(64);
    }
    // The session's second call repeats the first one's prompt under its key: OpenAI reads that from the cache.
    const cached = usageOf<{ input_tokens_details: { cached_tokens: number } }>(sent[1]).input_tokens_details
      .cached_tokens;
    expect(cached).toBeGreaterThanOrEqual(1024);
    expect(again.usage?.cachedInputTokens).toBe(cached);
    expect(expectOk(await providers.service.session(one)).turns[1]?.usage.cachedInputTokens).toBe(cached);
  });
});
