import { TURN_STATUSES, type TurnStatus } from "@aptix/contracts";
import { describe, expect, it } from "vitest";
import {
  isSuperseded,
  LIFECYCLE_EVENTS,
  type LifecycleEvent,
  nextStatus,
  TURN_LIFECYCLE,
  type TurnStatusOrNew,
} from "../../src/lifecycle/turn-lifecycle.js";

/**
 * The turn lifecycle (docs/architecture.md), cell by cell: every status the contracts know × every event. A status added to
 * `TURN_STATUSES` without its row fails here (and does not compile), as does an event without its column.
 */
const FROM: readonly TurnStatusOrNew[] = ["new", ...TURN_STATUSES];
const ENDED: readonly TurnStatus[] = ["completed", "cancelled", "abandoned", "superseded"];

const transitions = FROM.flatMap((from) =>
  LIFECYCLE_EVENTS.map((event) => [from, event, TURN_LIFECYCLE[from]?.[event]] as const),
);

describe("the turn lifecycle table", () => {
  it("has a row for every status and a cell for every event, naming only known statuses", () => {
    expect(Object.keys(TURN_LIFECYCLE).sort()).toEqual([...FROM].sort());
    for (const from of FROM)
      expect(Object.keys(TURN_LIFECYCLE[from]).sort()).toEqual([...LIFECYCLE_EVENTS].sort());
    for (const [from, event, to] of transitions) {
      expect(to === null || TURN_STATUSES.includes(to as TurnStatus), `${from} × ${event}`).toBe(true);
    }
  });

  it.each(TURN_STATUSES)("lets a %s turn reach an end, or is one", (status) => {
    const reached = new Set<TurnStatusOrNew>([status]);
    for (let grown = true; grown; ) {
      grown = false;
      for (const [from, , to] of transitions) {
        if (to !== null && to !== undefined && reached.has(from) && !reached.has(to)) {
          reached.add(to);
          grown = true;
        }
      }
    }
    expect(ENDED.some((ended) => reached.has(ended)) || status === "failed").toBe(true);
  });

  it("leaves ended turns as they are, whatever happens but a rewind, which supersedes them", () => {
    for (const [from, event, to] of transitions)
      if (ENDED.includes(from as TurnStatus))
        expect(to, `${from} × ${event}`).toBe(
          event === "rewind" && from !== "superseded" ? "superseded" : null,
        );
  });

  it("supersedes on a rewind every ended turn, and only those: an open turn keeps its session busy", () => {
    const rewindable = FROM.filter((from) => TURN_LIFECYCLE[from].rewind !== null);
    expect(rewindable).toEqual(["completed", "failed", "abandoned", "cancelled"]);
    for (const from of rewindable) expect(nextStatus(from, "rewind")).toBe("superseded");
  });

  it("calls superseded only the status a rewind leads to", () => {
    expect(TURN_STATUSES.filter(isSuperseded)).toEqual(["superseded"]);
  });

  it("cancels every open turn and every queued one, and only those", () => {
    const cancellable = FROM.filter((from) => TURN_LIFECYCLE[from].cancel !== null);
    expect(cancellable).toEqual(["queued", "running", "awaiting_client_tools"]);
    for (const from of cancellable) expect(nextStatus(from, "cancel")).toBe("cancelled");
  });

  it("starts a queued turn only from its queue, and queues only a new one", () => {
    expect(FROM.filter((from) => TURN_LIFECYCLE[from].dequeue !== null)).toEqual(["queued"]);
    expect(FROM.filter((from) => TURN_LIFECYCLE[from].enqueue !== null)).toEqual(["new"]);
  });

  it.each([
    ["new", "start", "running"],
    ["new", "enqueue", "queued"],
    ["queued", "dequeue", "running"],
    ["queued", "cancel", "cancelled"],
    ["running", "round_final", "completed"],
    ["running", "round_awaiting", "awaiting_client_tools"],
    ["running", "round_failed", "failed"],
    ["running", "lease_lost", "failed"],
    ["running", "rerun", "running"],
    ["awaiting_client_tools", "continuation", "running"],
    ["awaiting_client_tools", "abandon", "abandoned"],
    ["awaiting_client_tools", "round_failed", "failed"],
    ["failed", "rerun", "running"],
  ] as const)("moves a %s turn on %s to %s", (from, event, to) => {
    expect(nextStatus(from, event)).toBe(to);
  });

  it("throws on a pair the table refuses: the caller's decision let through what it must refuse", () => {
    const refused: Array<[TurnStatusOrNew, LifecycleEvent]> = [
      ["completed", "continuation"],
      ["awaiting_client_tools", "round_final"],
      ["new", "cancel"],
    ];
    for (const [from, event] of refused)
      expect(() => nextStatus(from, event)).toThrow(`A turn that is ${from} cannot take the event ${event}.`);
  });
});
