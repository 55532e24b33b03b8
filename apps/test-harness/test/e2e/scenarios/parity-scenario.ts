import type { NeutralModelTurn } from "../../../src/e2e/index.js";

/** What the client sends: a user turn (instruction) or the results of the client tools it was asked for. */
type ParityRequest =
  | { kind: "user"; turnId: string; instruction: string }
  | {
      kind: "tools";
      turnId: string;
      results: Array<{ toolCallId: string; resultJson?: string; errorMessage?: string; executionMs: number }>;
    };

/** One request and the model answers it consumes (one per provider request of its round). */
export interface ParityStep {
  request: ParityRequest;
  model: NeutralModelTurn[];
}

const APP_TS = JSON.stringify("export const app = () => 'hello';\n");

/**
 * The provider-neutral conversation the parity test runs on both providers, streaming and not: a client
 * tool continuation (with text before the call), a mode change by `agent_change_mode` (a server tool, so its
 * round makes two model calls and ends in the new mode's welcome), a tool offered only in the new mode, a tool
 * result that is an error, and plain turns. Call ids and token counts are fixed, so every answer is the same
 * whichever provider produced it.
 */
export const PARITY_SCENARIO: ParityStep[] = [
  {
    request: { kind: "user", turnId: "t1", instruction: "What does src/app.ts export?" },
    model: [
      {
        text: ["Let me ", "read ", "the file."],
        toolCalls: [{ id: "call_parity_read_1", name: "read_file", input: { path: "src/app.ts" } }],
        usage: { input: 120, output: 18 },
      },
    ],
  },
  {
    request: {
      kind: "tools",
      turnId: "t1",
      results: [{ toolCallId: "call_parity_read_1", resultJson: APP_TS, executionMs: 4 }],
    },
    model: [{ text: ["It exports ", "one function, ", "`app`."], usage: { input: 160, output: 9 } }],
  },
  {
    request: { kind: "user", turnId: "t2", instruction: "Please review that file." },
    model: [
      {
        toolCalls: [
          {
            id: "call_parity_mode_1",
            name: "agent_change_mode",
            input: { mode: "review", reason: "The user asked for a code review.", branch: false },
          },
        ],
        usage: { input: 190, output: 25 },
      },
      { text: ["Reviewing ", "src/app.ts ", "now."], usage: { input: 260, output: 6 } },
    ],
  },
  {
    request: { kind: "user", turnId: "t3", instruction: "Read src/util.ts and submit the review." },
    model: [
      {
        toolCalls: [
          { id: "call_parity_read_2", name: "read_file", input: { path: "src/util.ts" } },
          {
            id: "call_parity_submit_1",
            name: "submit_review",
            input: { summary: "app.ts is fine; util.ts is missing.", approve: false },
          },
        ],
        usage: { input: 300, output: 40 },
      },
    ],
  },
  {
    request: {
      kind: "tools",
      turnId: "t3",
      results: [
        {
          toolCallId: "call_parity_read_2",
          errorMessage: "ENOENT: src/util.ts does not exist",
          executionMs: 2,
        },
        { toolCallId: "call_parity_submit_1", resultJson: '{"submitted":true}', executionMs: 7 },
      ],
    },
    model: [
      {
        text: ["src/util.ts ", "does not exist; ", "the review is submitted."],
        usage: { input: 380, output: 12 },
      },
    ],
  },
  {
    request: { kind: "user", turnId: "t4", instruction: "Thanks!" },
    model: [{ text: ["You're ", "welcome."], usage: { input: 410, output: 3 } }],
  },
];

/** The request body of a step, for `sessionId`; user turns name `conversationContextId` (and `stream`). */
export function parityBody(
  step: ParityStep,
  sessionId: string,
  conversationContextId: string,
  stream: boolean,
): Record<string, unknown> {
  const { request } = step;
  if (request.kind === "tools") return { sessionId, turnId: request.turnId, toolResults: request.results };
  return {
    sessionId,
    turnId: request.turnId,
    instruction: request.instruction,
    conversationContextId,
    ...(stream ? { stream: true } : {}),
  };
}
