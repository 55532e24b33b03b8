/**
 * Provider ids stay in traces (docs/security.md), over real HTTP against the scripted OpenAI and Anthropic servers:
 * a PROVIDER_ERROR names the provider, the HTTP status and the error code, in the answer and in the session; the
 * provider's response id and request id are found in the turn's trace only.
 */
import { anthropicStep, step } from "@aptix/testing-llm-servers";
import { describe, expect, it } from "vitest";
import { expectFailure, expectOk, PROVIDER_CONTEXTS, uniqueId, userTurn } from "../../src/e2e/index.js";
import { setUpBothProviders } from "../support/both-providers.js";

const providers = setUpBothProviders();

const RESPONSE_ID = "resp_failed_7c1e9a";
const REQUEST_ID = "req_upstream_4b2d8f";

const failures: Array<{
  name: string;
  provider: "openai" | "anthropic";
  script: () => void;
  details: Record<string, unknown>;
  /** The request id the provider sent, when the script chose it (the OpenAI harness numbers its replies'). */
  requestId?: string;
  responseId?: string;
}> = [
  {
    name: "an OpenAI Response that failed",
    provider: "openai",
    script: () =>
      providers.openai.script(
        step.reply({
          id: RESPONSE_ID,
          status: "failed",
          error: { code: "server_error", message: "Overloaded." },
        }),
      ),
    details: { provider: "openai", status: 200, code: "server_error" },
    responseId: RESPONSE_ID,
  },
  {
    name: "an OpenAI HTTP 500",
    provider: "openai",
    script: () =>
      providers.openai.script(
        step.error(500, {
          code: "server_down",
          type: "server_error",
          headers: { "x-request-id": REQUEST_ID },
        }),
      ),
    details: { provider: "openai", status: 500, code: "server_down", type: "server_error" },
    requestId: REQUEST_ID,
  },
  {
    name: "an Anthropic HTTP 529",
    provider: "anthropic",
    script: () =>
      providers.anthropic.script(anthropicStep.overloaded({ headers: { "request-id": REQUEST_ID } })),
    details: { provider: "anthropic", status: 529, type: "overloaded_error" },
    requestId: REQUEST_ID,
  },
];

describe("PROVIDER_ERROR details", () => {
  it.each(failures)(
    "carry provider, status and code for $name, never its ids; the trace has them",
    async ({ provider, script, details, requestId, responseId }) => {
      const sessionId = uniqueId("provider-ids");
      script();
      const failed = await providers.service.post(
        userTurn(sessionId, "t1", "Hello", { conversationContextId: PROVIDER_CONTEXTS[provider] }),
      );
      expect(expectFailure(failed, 502, "PROVIDER_ERROR").details).toEqual(details);
      const session = expectOk(await providers.service.session(sessionId));
      expect(session.turns[0]?.error).toEqual({
        code: "PROVIDER_ERROR",
        message: expect.any(String),
        details,
      });

      // The trace has the ids: the request id the provider sent, and a failed Response's own id.
      const trace = expectOk(await providers.service.trace(sessionId, "t1"));
      const [call] = trace.llmCalls;
      expect(call?.error).toMatchObject({ code: "PROVIDER_ERROR", details });
      expect(call?.providerResponse).toMatchObject({
        requestId: requestId ?? expect.stringMatching(/^req_/),
      });
      if (responseId) expect(call?.providerResponse).toMatchObject({ body: { id: responseId } });
      const sent = call?.providerResponse as { requestId: string } | undefined;
      const ids = [sent?.requestId ?? "req_", responseId ?? "resp_"];
      for (const id of ids) {
        expect(JSON.stringify(failed.body)).not.toContain(id);
        expect(JSON.stringify(session)).not.toContain(id);
      }
    },
  );
});
