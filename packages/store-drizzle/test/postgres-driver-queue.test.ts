import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * postgres.js keeps its pool's connections in queues (`src/queue.js`, patched in `patches/`). With every connection
 * busy, each statement is pipelined onto the first busy one: it is shifted off the `busy` queue and pushed back.
 * Unpatched, each such cycle left a slot behind for good (and each `remove` scanned them all): under steady load the
 * array grew by one slot a statement, about ten thousand within 20 s of `bench:e2e`.
 */
const postgresDir = join(dirname(createRequire(import.meta.url).resolve("postgres")), "..", "..");
const builds = { esm: "src/queue.js", cjs: "cjs/src/queue.js" };

/** Runs `body` in a Node with `gc()` exposed, where `Queue` is the build's queue; answers what it prints. */
function inNode(build: string, body: string): unknown {
  const url = pathToFileURL(join(postgresDir, build)).href;
  const script = `const { default: Queue } = await import(${JSON.stringify(url)});\n${body}`;
  const out = execFileSync(process.execPath, ["--expose-gc", "--input-type=module", "-e", script], {
    encoding: "utf8",
  });
  return JSON.parse(out);
}

describe.each(Object.entries(builds))("postgres.js's connection queue (%s build)", (_, build) => {
  it("keeps no slot per statement pipelined onto four busy connections", () => {
    const result = inNode(
      build,
      `const busy = Queue();
      const connections = [{}, {}, {}, {}];
      for (const c of connections) busy.push(c);
      const cycle = () => { const c = busy.shift(); busy.push(c); };
      for (let i = 0; i < 10_000; i++) cycle();
      gc();
      const before = process.memoryUsage().heapUsed;
      for (let i = 0; i < 1_000_000; i++) cycle();
      gc();
      const grown = process.memoryUsage().heapUsed - before;
      console.log(JSON.stringify({ grown, length: busy.length }));`,
    );
    // A slot per cycle would be 8 MB and more; what is left of the holes is dropped as they build up.
    expect(result).toMatchObject({ length: 4, grown: expect.any(Number) });
    expect((result as { grown: number }).grown).toBeLessThan(1_000_000);
  });

  it("shifts in order, removes from anywhere, and ignores what it does not hold", () => {
    const result = inNode(
      build,
      `const q = Queue();
      const shifted = [];
      for (let i = 0; i < 200; i++) q.push(i);
      for (let i = 0; i < 150; i++) shifted.push(q.shift());
      const removed = [q.remove(160), q.remove(10), q.remove(199)];
      const rest = [];
      while (q.length) rest.push(q.shift());
      q.push("again");
      console.log(JSON.stringify({ inOrder: shifted.every((x, i) => x === i), removed, rest, length: q.length, last: q.shift() }));`,
    );
    expect(result).toStrictEqual({
      inOrder: true,
      removed: [160, null, 199],
      rest: Array.from({ length: 50 }, (_, i) => 150 + i).filter((x) => x !== 160 && x !== 199),
      length: 1,
      last: "again",
    });
  });
});
