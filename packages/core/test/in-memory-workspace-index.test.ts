import { InMemoryWorkspaceIndex } from "../src/in-memory/in-memory-workspace-index.js";
import { ManualClock } from "../src/testing/manual-clock.js";
import { describeWorkspaceIndexContract } from "../src/testing/workspace-index-contract.js";

describeWorkspaceIndexContract(
  "InMemoryWorkspaceIndex",
  async () => {
    const clock = new ManualClock();
    return { index: new InMemoryWorkspaceIndex(clock), clock, close: async () => {} };
  },
  { vectors: true },
);
