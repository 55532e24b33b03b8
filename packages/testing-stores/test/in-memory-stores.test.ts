import { systemClock } from "@aptix/core";
import {
  InMemoryFileStore,
  InMemorySessionStore,
  InMemoryTurnEventLog,
  ManualClock,
} from "@aptix/core/testing";
import {
  describeFileStoreContract,
  describeLeaseClockContract,
  describeSessionDirectoryContract,
  describeSessionStoreContract,
  describeTurnEventLogContract,
} from "../src/index.js";

describeSessionStoreContract("InMemorySessionStore", async () => {
  const clock = new ManualClock();
  return { store: new InMemorySessionStore(clock), clock, close: async () => {} };
});

describeSessionDirectoryContract("InMemorySessionStore", async () => {
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
