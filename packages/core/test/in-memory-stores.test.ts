import { systemClock } from "../src/defaults/system-clock.js";
import { InMemoryFileStore } from "../src/in-memory/in-memory-file-store.js";
import { InMemorySessionStore } from "../src/in-memory/in-memory-session-store.js";
import { InMemoryTurnEventLog } from "../src/in-memory/in-memory-turn-event-log.js";
import { describeFileStoreContract } from "../src/testing/file-store-contract.js";
import { describeLeaseClockContract } from "../src/testing/lease-clock-contract.js";
import { ManualClock } from "../src/testing/manual-clock.js";
import { describeSessionStoreContract } from "../src/testing/session-store-contract.js";
import { describeTurnEventLogContract } from "../src/testing/turn-event-log-contract.js";

describeSessionStoreContract("InMemorySessionStore", async () => {
  const clock = new ManualClock();
  return { store: new InMemorySessionStore(clock), clock, close: async () => {} };
});

// The in-memory store has no connections; handing the same store out as the "other connection" still runs
// the suite's `newConnection` path.
let current: InMemorySessionStore | undefined;
describeSessionStoreContract(
  "InMemorySessionStore (newConnection)",
  async () => {
    const clock = new ManualClock();
    current = new InMemorySessionStore(clock);
    return {
      store: current,
      clock,
      close: async () => {
        current = undefined;
      },
    };
  },
  {
    newConnection: async () => {
      if (current === undefined) throw new Error("newConnection called outside a test");
      return current;
    },
  },
);

describeFileStoreContract("InMemoryFileStore", async () => {
  const clock = new ManualClock();
  return { store: new InMemoryFileStore(clock), clock, close: async () => {} };
});

describeTurnEventLogContract("InMemoryTurnEventLog", async () => {
  const sessions = new InMemorySessionStore(new ManualClock());
  return { log: new InMemoryTurnEventLog(sessions), sessions, close: async () => {} };
});

// The in-memory store is its own database: every instance shares it, and its clock is the real time here.
describeLeaseClockContract("InMemorySessionStore", async () => {
  const store = new InMemorySessionStore(systemClock);
  return { instance: async () => store, close: async () => {} };
});
