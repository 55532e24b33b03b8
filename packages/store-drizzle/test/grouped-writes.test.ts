import { describe, expect, it } from "vitest";
import { GroupedWrites } from "../src/domains/grouped-writes.js";

/** A write of numbers that refuses any group holding a negative one, as a statement fails whole; it keeps its calls. */
function refusingNegatives() {
  const calls: number[][] = [];
  const write = async (inputs: number[]) => {
    calls.push(inputs);
    if (inputs.some((input) => input < 0)) throw new Error(`refused ${inputs.join(",")}`);
    return inputs.map((input) => input * 10);
  };
  return { calls, grouped: new GroupedWrites(write) };
}

describe("GroupedWrites", () => {
  it("writes what waits together, and a group that fails again one input at a time: only the refused one fails", async () => {
    const { calls, grouped } = refusingNegatives();
    const answers = await Promise.allSettled([1, 2, -3, 4].map((input) => grouped.add(input)));
    expect(answers).toEqual([
      { status: "fulfilled", value: 10 },
      { status: "fulfilled", value: 20 },
      { status: "rejected", reason: new Error("refused -3") },
      { status: "fulfilled", value: 40 },
    ]);
    // The first alone (nothing was being sent), the rest as one group, then each of that group alone.
    expect(calls).toEqual([[1], [2, -3, 4], [2], [-3], [4]]);
  });

  it("fails a write that went alone once, without writing it again", async () => {
    const { calls, grouped } = refusingNegatives();
    await expect(grouped.add(-1)).rejects.toThrow("refused -1");
    expect(calls).toEqual([[-1]]);
    // And goes on writing what comes next.
    expect(await grouped.add(5)).toBe(50);
  });

  it("fails a whole group at once when the database cannot be reached, without writing each input again", async () => {
    const calls: number[][] = [];
    let reachable = true;
    const grouped = new GroupedWrites(async (inputs: number[]) => {
      calls.push(inputs);
      if (!reachable) throw Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
      reachable = false;
      return inputs;
    });
    const answers = await Promise.allSettled([1, 2, 3].map((input) => grouped.add(input)));
    expect(answers.map((answer) => answer.status)).toEqual(["fulfilled", "rejected", "rejected"]);
    expect(calls).toEqual([[1], [2, 3]]);
  });
});
