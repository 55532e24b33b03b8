/** The one tool the scripted conversations of these tests offer, as each API defines it. */

/** `read_file` as a Responses API function tool. */
export const openAIReadFileTools = [
  {
    type: "function" as const,
    name: "read_file",
    description: "Read a file of the workspace.",
    parameters: {
      type: "object",
      properties: { path: { type: "string" } },
      required: ["path"],
      additionalProperties: false,
    },
    strict: true,
  },
];

/** `read_file` as a Messages API tool. */
export const anthropicReadFileTools = [
  {
    name: "read_file",
    description: "Read a file of the workspace.",
    input_schema: { type: "object" as const, properties: { path: { type: "string" } }, required: ["path"] },
  },
];
