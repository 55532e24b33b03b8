import {
  type ScriptedAnthropic,
  type ScriptedOpenAI,
  startScriptedAnthropic,
  startScriptedOpenAI,
} from "@aptix/testing-llm-servers";
import { afterAll, afterEach, beforeAll } from "vitest";
import {
  anthropicRig,
  openaiRig,
  PROVIDERS_CATALOG,
  type ProviderId,
  type ProviderRig,
  startTestService,
  type TestService,
  writeCatalog,
} from "../../src/e2e/index.js";

export interface BothProviders {
  openai: ScriptedOpenAI;
  anthropic: ScriptedAnthropic;
  /** Each harness behind the provider-neutral script; checked and reset after every test. */
  rigs: Record<ProviderId, ProviderRig>;
  /** The service, with a conversation context per provider (`PROVIDER_CONTEXTS`). */
  service: TestService;
}

export interface BothProvidersOptions {
  /** The catalog (default `PROVIDERS_CATALOG`): one context per provider. */
  catalog?: unknown;
  env?: Record<string, string>;
  store?: "pglite" | "postgres";
}

/**
 * The scripted OpenAI and Anthropic servers and one service using both, on PGlite unless told otherwise, with
 * no SDK retries (a scripted failure is seen once): started before the tests of the file or `describe` that
 * calls this and closed after them. The fields are there from the first test on.
 */
export function setUpBothProviders(options: BothProvidersOptions = {}): BothProviders {
  const both = { rigs: {} } as BothProviders;
  beforeAll(async () => {
    [both.openai, both.anthropic] = await Promise.all([startScriptedOpenAI(), startScriptedAnthropic()]);
    both.rigs.openai = openaiRig(both.openai);
    both.rigs.anthropic = anthropicRig(both.anthropic);
    both.service = await startTestService({
      store: options.store ?? "pglite",
      harness: both.openai,
      anthropic: both.anthropic,
      env: {
        APTIX_CONFIG: await writeCatalog(options.catalog ?? PROVIDERS_CATALOG),
        APTIX_OPENAI_MAX_RETRIES: "0",
        APTIX_ANTHROPIC_MAX_RETRIES: "0",
        ...options.env,
      },
    });
  });
  afterAll(async () => {
    await both.service?.close();
    await Promise.all([both.openai?.close(), both.anthropic?.close()]);
  });
  afterEach(() => {
    both.rigs.openai?.checkAndReset();
    both.rigs.anthropic?.checkAndReset();
  });
  return both;
}
