import { describe, expect, it } from "vitest";
import { setup } from "./http-app-setup.js";

const MiB = 1024 * 1024;
const documents = [
  {
    path: "src/billing/invoice.ts",
    contents: "export function invoiceTotal(lines: number[]) {\n  return 0;\n}",
  },
  { path: "README.md", contents: "# Shop\n\nSends an invoice.", tags: ["docs"], metadata: { team: "web" } },
];

/** The answer of a route for a workspace the caller has none of, as the router read its id. */
function notFound(workspaceId: string) {
  return {
    status: 404,
    body: {
      successful: false,
      errors: [
        {
          code: "WORKSPACE_NOT_FOUND",
          message: `No workspace ${JSON.stringify(workspaceId)} exists; push documents to create it.`,
          details: { workspaceId },
        },
      ],
      warnings: [],
    },
  };
}

/** The body of a response, with its status. */
async function answer(response: Response) {
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("the workspace routes (docs/http-api.md, Workspaces)", () => {
  it("pushes, describes, searches, deletes documents and drops the workspace", async () => {
    const { send, get } = setup();
    expect(await answer(await send("PUT", "/v1/workspaces/ws/documents", { documents }))).toMatchObject({
      status: 200,
      body: {
        successful: true,
        result: { workspaceId: "ws", upserted: 2, unchanged: 0, deleted: 0, chunks: 2 },
      },
    });
    const summary = await answer(await get("/v1/workspaces/ws"));
    expect(summary).toMatchObject({
      status: 200,
      body: { result: { workspaceId: "ws", documents: 2, chunks: 2 } },
    });
    expect(Number.isNaN(Date.parse(String((summary.body.result as { updatedAt: unknown }).updatedAt)))).toBe(
      false,
    );

    const searched = await answer(await send("POST", "/v1/workspaces/ws/search", { query: "invoice total" }));
    expect(searched.status).toBe(200);
    const { chunks } = searched.body.result as { chunks: Array<Record<string, unknown>> };
    expect(chunks.map(({ id: _id, score: _score, ...chunk }) => chunk)).toEqual([
      {
        path: "src/billing/invoice.ts",
        startLine: 1,
        endLine: 3,
        language: "typescript",
        text: documents[0]?.contents,
      },
      { path: "README.md", startLine: 1, endLine: 3, language: "markdown", text: documents[1]?.contents },
    ]);
    const scoped = await answer(
      await send("POST", "/v1/workspaces/ws/search", {
        query: "invoice",
        ragScope: [{ key: "team", operator: "==", values: ["web"] }],
        limit: 1,
      }),
    );
    expect(
      (scoped.body.result as { chunks: Array<{ path: string }> }).chunks.map((chunk) => chunk.path),
    ).toEqual(["README.md"]);

    expect(
      await answer(await send("DELETE", "/v1/workspaces/ws/documents", { paths: ["README.md"] })),
    ).toMatchObject({
      status: 200,
      body: { result: { deleted: 1 } },
    });
    expect(await answer(await send("DELETE", "/v1/workspaces/ws", undefined))).toMatchObject({
      status: 200,
      body: { result: { workspaceId: "ws" } },
    });
    expect((await get("/v1/workspaces/ws")).status).toBe(404);
  });

  it("answers an unknown workspace, or another principal's, 404 WORKSPACE_NOT_FOUND on every route but PUT", async () => {
    const { send, get } = setup();
    await send("PUT", "/v1/workspaces/ws/documents", { documents });
    const bob = "bob-key-0123456789ab";
    const unknown = notFound("ws");
    expect(await answer(await get("/v1/workspaces/ws", bob))).toEqual(unknown);
    expect(await answer(await send("POST", "/v1/workspaces/ws/search", { query: "invoice" }, bob))).toEqual(
      unknown,
    );
    expect(
      await answer(await send("DELETE", "/v1/workspaces/ws/documents", { paths: ["README.md"] }, bob)),
    ).toEqual(unknown);
    expect(await answer(await send("DELETE", "/v1/workspaces/ws", undefined, bob))).toEqual(unknown);
    // Alice's workspace is untouched; bob's PUT creates his own.
    expect(await answer(await get("/v1/workspaces/ws"))).toMatchObject({
      body: { result: { documents: 2 } },
    });
    expect(
      await answer(await send("PUT", "/v1/workspaces/ws/documents", { documents: [] }, bob)),
    ).toMatchObject({
      body: { result: { upserted: 0, chunks: 0 } },
    });
  });

  it("answers an id that cannot name a workspace as unknown (404), and refuses it for a push (400)", async () => {
    const { send, get } = setup();
    // [as sent, as the router reads it]: a NUL cannot be stored and 257 characters are too many, so no push
    // made them; a lone surrogate's bytes stay undecoded, a workspace nobody pushed.
    const ids: Array<[string, string]> = [
      ["ws%00", "ws\u0000"],
      ["w".repeat(257), "w".repeat(257)],
      ["ws%ED%A0%80", "ws%ED%A0%80"],
    ];
    for (const [sent, read] of ids) {
      const unknown = notFound(read);
      expect(await answer(await get(`/v1/workspaces/${sent}`))).toEqual(unknown);
      expect(await answer(await send("DELETE", `/v1/workspaces/${sent}`, undefined))).toEqual(unknown);
      expect(
        await answer(await send("DELETE", `/v1/workspaces/${sent}/documents`, { paths: ["README.md"] })),
      ).toEqual(unknown);
      expect(await answer(await send("POST", `/v1/workspaces/${sent}/search`, { query: "invoice" }))).toEqual(
        unknown,
      );
    }
    for (const sent of ["ws%00", "w".repeat(257)]) {
      const pushed = await answer(await send("PUT", `/v1/workspaces/${sent}/documents`, { documents }));
      expect(pushed).toMatchObject({
        status: 400,
        body: { errors: [{ code: "VALIDATION_FAILED", details: { fields: [{ path: "workspaceId" }] } }] },
      });
    }
  });

  it("refuses bad input with 400 VALIDATION_FAILED naming the field, and changes nothing", async () => {
    const { send, get, app } = setup({ maxBodyBytes: 4 * MiB });
    await send("PUT", "/v1/workspaces/ws/documents", { documents });
    const fieldsOf = async (response: Response) => {
      const { status, body } = await answer(response);
      const [error] = body.errors as Array<{ code: string; details: { fields: Array<{ path: string }> } }>;
      return { status, code: error?.code, paths: error?.details.fields.map((field) => field.path) };
    };
    const refused = (paths: string[]) => ({ status: 400, code: "VALIDATION_FAILED", paths });
    const put = (body: unknown) => send("PUT", "/v1/workspaces/ws/documents", body);

    expect(
      await fieldsOf(await put({ documents: [{ path: "/etc/passwd", contents: "x" }], replace: true })),
    ).toEqual(refused(["documents[0].path"]));
    expect(await fieldsOf(await put({ documents: [{ path: "a/../../b", contents: "x" }] }))).toEqual(
      refused(["documents[0].path"]),
    );
    expect(
      await fieldsOf(await put({ documents: [{ path: "big.txt", contents: "x".repeat(MiB + 1) }] })),
    ).toEqual(refused(["documents[0].contents"]));
    const many = Array.from({ length: 1001 }, (_, index) => ({ path: `f${index}.txt`, contents: "" }));
    expect(await fieldsOf(await put({ documents: many }))).toEqual({
      status: 413,
      code: "PAYLOAD_TOO_LARGE",
      paths: ["documents"],
    });
    expect(
      await fieldsOf(
        await put({
          documents: [
            { path: "a.txt", contents: "" },
            { path: "a.txt", contents: "" },
          ],
        }),
      ),
    ).toEqual(refused(["documents[1].path"]));
    expect(await fieldsOf(await put({ documents: [], replace: true, mode: "x" }))).toEqual(refused(["mode"]));
    expect(
      await fieldsOf(
        await send("POST", "/v1/workspaces/ws/search", {
          query: "invoice",
          ragScope: [{ key: "path", operator: "startsWith", values: ["src"] }],
        }),
      ),
    ).toEqual(refused(["ragScope[0].operator"]));
    expect(await fieldsOf(await send("POST", "/v1/workspaces/ws/search", { query: "x", limit: 51 }))).toEqual(
      refused(["limit"]),
    );
    expect(await fieldsOf(await send("DELETE", "/v1/workspaces/ws/documents", { paths: [] }))).toEqual(
      refused(["paths"]),
    );
    expect(
      await fieldsOf(await send("PUT", `/v1/workspaces/${"w".repeat(257)}/documents`, { documents })),
    ).toEqual(refused(["workspaceId"]));
    expect(await fieldsOf(await put("{not json"))).toEqual(refused([""]));
    const asText = await app.request("/v1/workspaces/ws/documents", {
      method: "PUT",
      headers: { "content-type": "text/plain", authorization: "Bearer alice-key-0123456789" },
      body: "{}",
    });
    expect(asText.status).toBe(415);
    // None of it changed the workspace: the refused `replace: true` deleted nothing.
    expect(await answer(await get("/v1/workspaces/ws"))).toMatchObject({
      body: { result: { documents: 2, chunks: 2 } },
    });
  });

  it("refuses a push body past 16 MiB with 413 PAYLOAD_TOO_LARGE naming the limit, under a larger body limit", async () => {
    const { send, get } = setup({ maxBodyBytes: 32 * MiB });
    const push = (count: number) =>
      send("PUT", "/v1/workspaces/ws/documents", {
        documents: Array.from({ length: count }, (_, index) => ({
          path: `f${index}.txt`,
          contents: `${index} ${"x".repeat(MiB - 16)}`,
        })),
      });
    // 17 documents of 1 MiB: a body the contracts would accept one by one, larger than a push may be.
    expect(await answer(await push(17))).toMatchObject({
      status: 413,
      body: {
        errors: [
          {
            code: "PAYLOAD_TOO_LARGE",
            message: `The body is larger than ${16 * MiB} bytes.`,
            details: { maxBytes: 16 * MiB },
          },
        ],
      },
    });
    expect((await get("/v1/workspaces/ws")).status).toBe(404);
    expect(await answer(await push(15))).toMatchObject({ status: 200, body: { result: { upserted: 15 } } });
  });
});
