import type { TurnStatus } from "@aptix/contracts";

/**
 * What changes a turn's status (docs/architecture.md): its start; the outcome of a round (final, awaiting client tools,
 * failed); a continuation answering its client calls; a cancel; its instance's lease lost (the reaper, or a
 * request taking the session over); a new user turn abandoning it; a round sent again after its instance
 * stopped (`rerun`, which also reopens a turn the reaper failed); a rewind going back before it (`rewind`); a
 * new turn queued behind the session's running one (`enqueue`), and started once the turns before it ended
 * (`dequeue`).
 */
export const LIFECYCLE_EVENTS = [
  "start",
  "enqueue",
  "dequeue",
  "round_final",
  "round_awaiting",
  "round_failed",
  "continuation",
  "cancel",
  "lease_lost",
  "abandon",
  "rerun",
  "rewind",
] as const;
/** One event of the turn lifecycle (not a server-sent event of a streamed turn: that is `LifecycleEvent`). */
export type LifecycleEvent = (typeof LIFECYCLE_EVENTS)[number];

/** A turn before it exists: only its start applies. */
export type TurnStatusOrNew = TurnStatus | "new";

const none = {
  start: null,
  enqueue: null,
  dequeue: null,
  round_final: null,
  round_awaiting: null,
  round_failed: null,
  continuation: null,
  cancel: null,
  lease_lost: null,
  abandon: null,
  rerun: null,
  rewind: null,
} as const satisfies Record<LifecycleEvent, null>;

/**
 * The turn lifecycle: every status × event, the next status, or null where the event cannot reach a turn in that
 * status (the request is refused before any write). Typed over every status, so a new one does not compile until
 * its row is written; `docs/architecture.md` shows this table.
 */
export const TURN_LIFECYCLE: {
  readonly [S in TurnStatusOrNew]: { readonly [E in LifecycleEvent]: TurnStatus | null };
} = {
  new: { ...none, start: "running", enqueue: "queued" },
  // Waits for the turns before it; a rewind cannot reach it (the session is busy while it waits).
  queued: { ...none, dequeue: "running", cancel: "cancelled" },
  running: {
    ...none,
    round_final: "completed",
    round_awaiting: "awaiting_client_tools",
    round_failed: "failed",
    cancel: "cancelled",
    lease_lost: "failed",
    rerun: "running",
  },
  awaiting_client_tools: {
    ...none,
    continuation: "running",
    // Results that do not answer its calls fail the round they open, before it runs.
    round_failed: "failed",
    cancel: "cancelled",
    abandon: "abandoned",
  },
  // A rewind reaches only ended turns: while one is open the session is busy.
  completed: { ...none, rewind: "superseded" },
  // Only a turn the reaper failed (TURN_INTERRUPTED) is reopened, by its round sent again.
  failed: { ...none, rerun: "running", rewind: "superseded" },
  cancelled: { ...none, rewind: "superseded" },
  abandoned: { ...none, rewind: "superseded" },
  superseded: none,
};

/**
 * Whether the table lets a turn in `from` take `event`: the one guard a decision asks before it writes, so no
 * decision can let through what the table refuses, nor refuse what it allows.
 */
export function canTake(from: TurnStatusOrNew, event: LifecycleEvent): boolean {
  return TURN_LIFECYCLE[from][event] !== null;
}

/**
 * Whether a turn in `status` is still open: its session holds it (`openTurnId`) until it ends. The table is the
 * definition: a client may cancel every open turn, and only those, and a queued turn (which can be cancelled too)
 * is not open yet: it is the one that can still be started.
 */
export function isOpen(status: TurnStatus): boolean {
  return canTake(status, "cancel") && !canTake(status, "dequeue");
}

/** The statuses the table's `rewind` column leads to. */
const REWOUND: ReadonlySet<TurnStatus | null> = new Set(
  Object.values(TURN_LIFECYCLE).map((row) => row.rewind),
);

/**
 * Whether a turn in `status` is one a rewind went back before: kept in the session, no longer in its
 * conversation. The table's `rewind` column is the definition.
 */
export function isSuperseded(status: TurnStatus): boolean {
  return REWOUND.has(status);
}

/** The status `event` moves a turn in `from` to; a pair the table refuses is a bug of the caller's decision. */
export function nextStatus(from: TurnStatusOrNew, event: LifecycleEvent): TurnStatus {
  const to = TURN_LIFECYCLE[from][event];
  if (to === null) throw new Error(`A turn that is ${from} cannot take the event ${event}.`);
  return to;
}
