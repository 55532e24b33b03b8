/**
 * A big workspace push leaves the server responsive (docs/knowledge.md, docs/security.md): 20 MB of documents pushed
 * over HTTP to the real server on Postgres, as a child process of its own, while `/healthz` is asked again and
 * again; every answer comes within 250 ms. Cutting those documents takes seconds of CPU, which the server spends
 * in worker threads, and the rows go to the database in batches, so the event loop keeps answering.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  API_KEYS,
  databaseFor,
  e2eServerEnv,
  expectOk,
  type ServerProcess,
  serviceClient,
  spawnServer,
  type TestDatabase,
} from "../../src/e2e/index.js";

vi.setConfig({ testTimeout: 240_000, hookTimeout: 120_000 });

/** The bound docs/security.md sets for `/healthz` while a push runs. */
const HEALTHZ_BOUND_MS = 250;
const DOCUMENT_BYTES = 1_000_000;

/** A megabyte of TypeScript-like source, different for each `seed`: declarations, identifiers, numbers. */
function sourceDocument(seed: number): string {
  const words = [
    "invoice",
    "Total",
    "customer",
    "Manager",
    "parcel",
    "address",
    "label",
    "compute",
    "Service",
  ];
  const lines: string[] = [];
  let size = 0;
  for (let line = 0; size < DOCUMENT_BYTES - 200; line++) {
    const word = (at: number) => words[(seed * 31 + line * 7 + at) % words.length];
    const text =
      line % 40 === 0
        ? `export function ${word(0)}${word(1)}${seed}_${line}(${word(2)}: ${word(3)}) {`
        : line % 40 === 39
          ? "}"
          : `  const ${word(4)}_${word(5)}${line} = ${word(6)}.get${word(7)}(${word(8)}, "${word(1)} ${line}") + ${seed};`;
    lines.push(text);
    size += text.length + 1;
  }
  return lines.join("\n");
}

describe("a 20 MB workspace push on Postgres", () => {
  let database: TestDatabase;
  let server: ServerProcess;

  beforeAll(async () => {
    database = await databaseFor("postgres");
    server = await spawnServer({ env: await e2eServerEnv(database), startTimeoutMs: 90_000 });
  });
  afterAll(async () => {
    await server?.stop();
    await database?.dispose();
  });

  it("answers /healthz within 250 ms all along", async () => {
    const client = serviceClient(server.url);
    // Serialized before polling starts: this process's own JSON.stringify would delay the answers it times.
    const bodies = [0, 1].map((batch) =>
      JSON.stringify({
        documents: Array.from({ length: 10 }, (_, index) => ({
          path: `src/module${batch}_${index}.ts`,
          contents: sourceDocument(batch * 10 + index),
        })),
      }),
    );
    const push = async (body: string) => {
      const answer = await fetch(`${server.url}/v1/workspaces/big/documents`, {
        method: "PUT",
        headers: { authorization: `Bearer ${API_KEYS.alice}`, "content-type": "application/json" },
        body,
      });
      return { status: answer.status, body: await answer.json() };
    };
    // A first answer opens the connection the polls reuse.
    expect((await client.get("/healthz")).status).toBe(200);
    let pushing = true;
    const latencies: number[] = [];
    const polling = (async () => {
      while (pushing) {
        const started = performance.now();
        const answer = await fetch(`${server.url}/healthz`);
        await answer.arrayBuffer();
        latencies.push(performance.now() - started);
        expect(answer.status).toBe(200);
      }
    })();
    try {
      for (const body of bodies) {
        expect(await push(body)).toMatchObject({ status: 200, body: { result: { upserted: 10 } } });
      }
    } finally {
      pushing = false;
      await polling;
    }
    expect(expectOk(await client.get("/v1/workspaces/big"))).toMatchObject({ documents: 20 });
    // The pushes took seconds: /healthz was asked all along, not only after them.
    expect(latencies.length).toBeGreaterThan(20);
    expect(Math.max(...latencies)).toBeLessThanOrEqual(HEALTHZ_BOUND_MS);
  });
});
