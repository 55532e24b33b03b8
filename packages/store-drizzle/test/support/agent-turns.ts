import type { ServerTool } from "@aptix/core";
import { ManualClock, ScriptedLlmProvider } from "@aptix/core/testing";
import { expect } from "vitest";
import type { AptixStore, StoreOptions } from "../../src/index.js";
import { plainService } from "./plain-service.js";

/** Statements sent by kind: "begin", "commit", "select transcript_items", "insert llm_calls", … */
type StatementTally = Record<string, number>;

interface MeasuredTurn {
  statements: StatementTally;
  llmCalls: number;
}

type OpenStore = (options: Pick<StoreOptions, "clock" | "onQuery">) => Promise<AptixStore>;

/** The session length at which a turn must still send what an early one sent. */
export const LAST_TURN = 200;

/**
 * The providers a statement count is checked with, and the turn each is compared from: turn 2, the first that
 * looks like every later one: a replaying provider's turn 1 has nothing to replay on its first call, so it
 * reads the transcript once, not twice.
 */
export const STATEMENT_CHECKS = [
  { provider: "storing its responses", storesResponses: true, baseline: 2 },
  { provider: "replaying the transcript", storesResponses: false, baseline: 2 },
] as const;

/**
 * Runs LAST_TURN turns of one session and expects turn LAST_TURN to send the statements turn `baseline` sent,
 * BEGIN and COMMIT included, and the transcript to be read once per LLM call when replayed, never otherwise.
 */
export async function expectSteadyStatementsPerTurn(
  open: OpenStore,
  { storesResponses, baseline }: (typeof STATEMENT_CHECKS)[number],
): Promise<void> {
  const turns = await runAgentTurns({
    open,
    storesResponses,
    turns: LAST_TURN,
    measure: [baseline, LAST_TURN],
  });
  const last = turns.get(LAST_TURN);
  expect(last).toStrictEqual(turns.get(baseline));
  expect(last?.llmCalls).toBe(2);
  expect(last?.statements["select transcript_items"]).toBe(storesResponses ? undefined : last?.llmCalls);
}

/** The kind of a statement: its verb and the first table it names, so a tally diff says what changed. */
function statementKind(sql: string): string {
  const verb =
    sql
      .trim()
      .split(/[\s;]+/, 1)[0]
      ?.toLowerCase() ?? "";
  const table = /\b(?:from|into|update)\s+"(\w+)"/i.exec(sql)?.[1];
  return table === undefined ? verb : `${verb} ${table}`;
}

const echo: ServerTool<string> = {
  definition: { name: "echo", description: "Echoes its text.", parameters: { type: "object" } },
  parseArguments: (args) => ({ ok: true, value: JSON.stringify(args) }),
  execute: async (text) => ({ result: text }),
};

/**
 * Runs `turns` user turns of one session through core's real AgentService on the store `open` opens, with a
 * scripted provider that stores its responses server-side or not (`storesResponses`), and answers the
 * statements each turn of `measure` sent. Every turn makes two LLM calls (a server tool call, then the answer),
 * so a turn also covers the continuation between calls.
 */
async function runAgentTurns(options: {
  open: OpenStore;
  storesResponses: boolean;
  turns: number;
  measure: readonly number[];
}): Promise<Map<number, MeasuredTurn>> {
  const clock = new ManualClock();
  let tally: Map<string, number> | undefined;
  const store = await options.open({
    clock,
    onQuery: (sql) => {
      const kind = statementKind(sql);
      tally?.set(kind, (tally.get(kind) ?? 0) + 1);
    },
  });
  try {
    const provider = new ScriptedLlmProvider({ id: "scripted", storesResponses: options.storesResponses });
    const service = plainService(store, provider, { tools: [echo as ServerTool], clock });

    const measured = new Map<number, MeasuredTurn>();
    for (let turn = 1; turn <= options.turns; turn++) {
      provider.enqueue({ toolCalls: [{ name: "echo", arguments: { turn } }] }, { text: `Answer ${turn}.` });
      const callsBefore = provider.requests.length;
      tally = options.measure.includes(turn) ? new Map() : undefined;
      const result = await service.execute(
        { sessionId: "session-long", turnId: `turn-${turn}`, instruction: `Question ${turn}?` },
        "principal-a",
      );
      if (!result.successful || result.result.kind !== "final") {
        throw new Error(`turn ${turn} did not end with a final answer: ${JSON.stringify(result)}`);
      }
      if (tally !== undefined) {
        measured.set(turn, {
          statements: Object.fromEntries(tally),
          llmCalls: provider.requests.length - callsBefore,
        });
      }
      tally = undefined;
      clock.advance(1_000);
    }
    return measured;
  } finally {
    await store.close();
  }
}
