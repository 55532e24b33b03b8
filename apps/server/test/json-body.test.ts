import { WORKSPACE_LIMITS } from "@aptix/contracts";
import { describe, expect, it } from "vitest";
import { MAX_JSON_SEPARATORS } from "../src/http/json-body.js";
import { countJsonSeparators } from "../src/http/json-separators.js";
import { setup } from "./http-app-setup.js";
import { largestRequests } from "./largest-requests.js";

/** `{"k0":0,…}` with `count` keys: `2 × count - 1` separators. */
const unknownKeys = (count: number) =>
  `{${Array.from({ length: count }, (_, index) => `"k${index}":0`).join(",")}}`;

describe("the JSON values of a body", () => {
  it("are counted by their separators outside strings, escaped quotes and all", () => {
    expect(countJsonSeparators('{"a":1,"b":[1,2,{}]}', 100)).toBe(5);
    expect(countJsonSeparators('{"a,:\\",:":",:\\\\",":[]}', 100)).toBe(2);
    expect(countJsonSeparators('["\\\\\\"]",1]', 100)).toBe(1);
    // It stops counting past the most it is asked about, and text that is not JSON is counted all the same.
    expect(countJsonSeparators(",".repeat(1000), 10)).toBe(11);
    expect(countJsonSeparators('{"open:,', 100)).toBe(0);
  });

  it("leave room for the largest requests the contracts accept, and for a push of 1,000 plain documents", () => {
    for (const request of Object.values(largestRequests())) {
      expect(countJsonSeparators(JSON.stringify(request), MAX_JSON_SEPARATORS)).toBeLessThan(2_000);
    }
    const push = JSON.stringify({
      documents: Array.from({ length: WORKSPACE_LIMITS.maxDocumentsPerRequest }, (_, index) => ({
        path: `src/f${index}.ts`,
        contents: "export {};",
        language: "typescript",
        repo: "shop",
        tags: ["web"],
        metadata: { team: "web" },
      })),
      replace: true,
    });
    expect(countJsonSeparators(push, MAX_JSON_SEPARATORS)).toBeLessThan(MAX_JSON_SEPARATORS / 4);
  });

  it("past 65,536 are refused 400 naming the whole body, before they are parsed; up to it, as zod judges them", async () => {
    const { post } = setup({ maxBodyBytes: 32 * 1024 * 1024 });
    const atLimit = await post(unknownKeys(MAX_JSON_SEPARATORS / 2));
    const text = await atLimit.text();
    expect(atLimit.status).toBe(400);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(16 * 1024);
    const fields = JSON.parse(text).errors[0].details.fields as Array<{ path: string; message: string }>;
    expect(fields).toHaveLength(21);
    expect(fields.at(-1)).toEqual({ path: "", message: `… and ${MAX_JSON_SEPARATORS / 2 + 2 - 20} more` });

    const past = await post(unknownKeys(MAX_JSON_SEPARATORS / 2 + 1));
    expect(past.status).toBe(400);
    const message = `holds more than ${MAX_JSON_SEPARATORS} JSON values (array items and object members); send fewer in one request`;
    expect(await past.json()).toMatchObject({
      errors: [
        {
          code: "VALIDATION_FAILED",
          message: `The request body ${message}.`,
          details: { fields: [{ path: "", message }] },
        },
      ],
    });
  });
});
