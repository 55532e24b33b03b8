import type { ScriptedOpenAI } from "@aptix/testing-llm-servers";
import type { TestService, TestStoreKind } from "../../../src/e2e/index.js";

/**
 * What a scenario module's tests run against; read its members inside a test (they are set in `beforeAll`).
 * The scenario modules register tests only: `http.e2e.test.ts` runs them once per store.
 */
export interface ScenarioContext {
  readonly store: TestStoreKind;
  /** The scripted OpenAI server every service of the file talks to. */
  readonly harness: ScriptedOpenAI;
  /** The server as it runs by default (the SDK retries twice). */
  readonly service: TestService;
  /** The server with `APTIX_OPENAI_MAX_RETRIES=0` and `APTIX_OPENAI_TIMEOUT_MS=STRICT_TIMEOUT_MS`. */
  readonly strict: TestService;
}

export const STRICT_TIMEOUT_MS = 1_000;

type Body = Record<string, unknown>;

/** The bodies of the `POST /v1/responses` the harness received, in order. */
export function sentBodies(harness: ScriptedOpenAI): Body[] {
  return harness.responseRequests().map((request) => request.body as Body);
}

/** The id of the Response the harness answered its `index`-th model request with. */
export function responseIdOf(harness: ScriptedOpenAI, index: number): string {
  const id = harness.responseRequests()[index]?.answer?.responseId;
  if (id === undefined) throw new Error(`request #${index} got no response`);
  return id;
}
