import { describe, expect, it } from "vitest";
import { promptInput } from "../src/acp/prompt-input.js";

const ROOT = "/home/me/shop";

describe("a prompt's content blocks as a user turn", () => {
  it("joins text blocks into the instruction and names resource links by workspace path", () => {
    expect(
      promptInput(
        [
          { type: "text", text: "Fix the total." },
          { type: "text", text: "Keep it short." },
          { type: "resource_link", uri: "file:///home/me/shop/src/cart.ts", name: "cart.ts" },
          { type: "resource_link", uri: "https://example.com/spec.md", name: "spec" },
        ],
        ROOT,
      ),
    ).toEqual({
      instruction:
        "Fix the total.\n\nKeep it short.\n\nFiles referenced:\n- src/cart.ts (cart.ts)\n- spec.md (spec)",
    });
  });

  it("makes embedded resources input artifacts (text as it is, blobs as base64) and images clipboard images", () => {
    expect(
      promptInput(
        [
          {
            type: "resource",
            resource: {
              uri: "file:///home/me/shop/src/a.ts",
              text: "export {};\n",
              mimeType: "text/x-typescript",
            },
          },
          { type: "resource", resource: { uri: "file:///elsewhere/logo.bin", blob: "AAEC" } },
          { type: "image", mimeType: "image/png", data: "iVBORw0KGgo=" },
        ],
        ROOT,
      ),
    ).toEqual({
      inputArtifacts: [
        {
          relativePath: "src/a.ts",
          fileName: "a.ts",
          contents: "export {};\n",
          origin: "ide",
          mimeType: "text/x-typescript",
        },
        {
          relativePath: "logo.bin",
          fileName: "logo.bin",
          contents: "AAEC",
          origin: "ide",
          encoding: "base64",
        },
      ],
      clipboardImages: [{ id: "image-3", mimeType: "image/png", dataBase64: "iVBORw0KGgo=" }],
    });
  });

  it("refuses audio, which initialize does not offer, naming the block", () => {
    expect(() => promptInput([{ type: "audio", mimeType: "audio/wav", data: "AAAA" }], ROOT)).toThrow(
      "prompt[0] is audio content",
    );
  });
});
