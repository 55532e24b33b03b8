import { prepareDocument, sha256ContentHashService } from "@aptix/core";
import { afterAll, describe, expect, it } from "vitest";
import { DocumentPreparationPool } from "../src/knowledge/document-preparation-pool.js";
import { readPushBody } from "../src/knowledge/read-push-body.js";

// The first task starts a thread, which loads core from its sources through tsx: seconds on a busy machine.
const TASK_TIMEOUT_MS = 60_000;

describe("DocumentPreparationPool", () => {
  const pool = new DocumentPreparationPool({ maxThreads: 1 });
  afterAll(() => pool.close());

  const document = {
    path: "src/invoice.ts",
    contents: "export function invoiceTotal(lines: number[]) {\n  return lines.length;\n}",
  };

  it(
    "prepares in a worker thread what prepareDocument prepares",
    async () => {
      const input = { document, chunking: { maxLines: 2 } };
      expect(await pool.prepare(input)).toEqual(prepareDocument(input, sha256ContentHashService));
      const { contentHash } = prepareDocument(input, sha256ContentHashService);
      expect(await pool.prepare({ ...input, storedHash: contentHash })).toEqual({
        language: "typescript",
        contentHash,
      });
    },
    TASK_TIMEOUT_MS,
  );

  it(
    "fails the task with the chunker's error for bounds it cannot honour, and keeps serving",
    async () => {
      await expect(pool.prepare({ document, chunking: { maxLines: 0 } })).rejects.toThrow(
        "maxLines must be an integer of at least 1, got 0",
      );
      expect((await pool.prepare({ document })).chunks).toHaveLength(1);
    },
    TASK_TIMEOUT_MS,
  );

  it(
    "reads a push's body as readPushBody does: the request, or the refusal naming the field",
    async () => {
      const bodies = [
        { documents: [document], replace: true },
        { documents: [{ ...document, path: "/etc/passwd" }] },
        { documents: [document], unknown: 1 },
      ].map((body) => new TextEncoder().encode(JSON.stringify(body)));
      for (const body of [...bodies, new TextEncoder().encode("{ not json")]) {
        expect(await pool.readPushBody(body)).toEqual(readPushBody(body));
      }
      expect(await pool.readPushBody(bodies[0] as Uint8Array)).toMatchObject({
        successful: true,
        result: { documents: [document], replace: true },
      });
      const refused = await pool.readPushBody(bodies[1] as Uint8Array);
      expect(refused.successful ? [] : refused.errors[0].details?.fields).toEqual([
        { path: "documents[0].path", message: expect.any(String) },
      ]);
    },
    TASK_TIMEOUT_MS,
  );
});
