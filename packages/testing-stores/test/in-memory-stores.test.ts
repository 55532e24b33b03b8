import { systemClock } from "@aptix/core";
import {
  InMemoryFileStore,
  InMemoryTurnEventLog,
  inMemorySessionStores,
  ManualClock,
} from "@aptix/core/testing";
import {
  describeFileStoreContract,
  describeLeaseClockContract,
  describeSessionDirectoryContract,
  describeTranscriptStoreContract,
  describeTurnEventLogContract,
  describeTurnStoreContract,
  describeUsageStoreContract,
  describeWebhookOutboxContract,
} from "../src/index.js";

async function inMemory() {
  const clock = new ManualClock();
  const store = inMemorySessionStores(clock);
  return { store, files: store.files, clock, close: async () => {} };
}

describeTurnStoreContract("in memory", inMemory);
describeTranscriptStoreContract("in memory", inMemory);
describeSessionDirectoryContract("in memory", inMemory);
describeUsageStoreContract("in memory", inMemory);
describeWebhookOutboxContract("in memory", inMemory);

// The in-memory store has no connections; handing the same store out as the "other connection" still runs
// the suite's `newConnection` path.
let current: ReturnType<typeof inMemorySessionStores> | undefined;
describeTurnStoreContract(
  "in memory (newConnection)",
  async () => {
    const clock = new ManualClock();
    current = inMemorySessionStores(clock);
    return {
      store: current,
      files: current.files,
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
  const sessions = inMemorySessionStores(new ManualClock());
  return { log: new InMemoryTurnEventLog(sessions.turns), sessions, close: async () => {} };
});

// The in-memory store is its own database: every instance shares it, and its clock is the real time here.
describeLeaseClockContract("in memory", async () => {
  const store = inMemorySessionStores(systemClock);
  return { instance: async () => store, close: async () => {} };
});
