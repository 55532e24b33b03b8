import { InMemoryWorkspaceIndex, ManualClock } from "@aptix/core/testing";
import { describeWorkspaceIndexContract } from "../src/index.js";

describeWorkspaceIndexContract(
  "InMemoryWorkspaceIndex",
  async () => {
    const clock = new ManualClock();
    return { index: new InMemoryWorkspaceIndex(clock), clock, close: async () => {} };
  },
  { vectors: true },
);
