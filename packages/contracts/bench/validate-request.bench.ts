import { bench, describe } from "vitest";
import { validateAgentExecuteRequest } from "../src/index.js";

// Validation runs on every request: how it scales with body size matters more than any single number.
const small = { sessionId: "s", turnId: "t", instruction: "Explain this function." };
const artifacts = {
  sessionId: "s",
  turnId: "t",
  instruction: "Review these files.",
  inputArtifacts: Array.from({ length: 20 }, (_, index) => ({
    relativePath: `src/module-${index}/file.ts`,
    fileName: "file.ts",
    contents: "export const value = 1;\n".repeat(2_000),
    origin: "ide",
  })),
};
const image = {
  sessionId: "s",
  turnId: "t",
  clipboardImages: [{ id: "img", mimeType: "image/png", dataBase64: "QUJD".repeat(1_000_000) }],
};

describe("validateAgentExecuteRequest", () => {
  bench("small user turn", () => {
    validateAgentExecuteRequest(small);
  });
  bench("20 artifacts of 48 KB", () => {
    validateAgentExecuteRequest(artifacts);
  });
  bench("one 3 MB clipboard image", () => {
    validateAgentExecuteRequest(image);
  });
});
