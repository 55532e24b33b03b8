import type { FieldError } from "@aptix/contracts";
import { describe, expect, it } from "vitest";
import type { AgentCatalogConfig } from "../../src/catalog/agent-catalog.js";
import { AgentCatalog, type ServerTool } from "../../src/index.js";
import { lookupTool, TEST_CATALOG } from "../support/test-agent.js";

function fieldsOf(
  config: AgentCatalogConfig,
  serverTools: ServerTool[] = [lookupTool as ServerTool],
): FieldError[] {
  const created = AgentCatalog.create(config, serverTools);
  if (created.successful) throw new Error("expected the catalog to be refused");
  expect(created.errors).toHaveLength(1);
  expect(created.errors[0].code).toBe("VALIDATION_FAILED");
  return created.errors[0].details?.fields as FieldError[];
}

type Mode = AgentCatalogConfig["modes"][number];
type Context = AgentCatalogConfig["conversationContexts"][number];
const [general, review] = TEST_CATALOG.modes as [Mode, Mode];
const [defaultContext, statelessContext, reviewingContext] = TEST_CATALOG.conversationContexts as [
  Context,
  Context,
  Context,
];
const [readFile] = TEST_CATALOG.clientTools as [AgentCatalogConfig["clientTools"][number]];

describe("AgentCatalog.create", () => {
  it("accepts the test catalog and offers each mode's tools followed by agent_change_mode", () => {
    const created = AgentCatalog.create(TEST_CATALOG, [lookupTool as ServerTool]);
    if (!created.successful) throw new Error(created.errors[0].message);
    const catalog = created.result;
    expect(catalog.toolsFor(general).map((tool) => tool.name)).toEqual([
      "read_file",
      "lookup",
      "agent_change_mode",
    ]);
    expect(catalog.toolsFor(review).map((tool) => tool.name)).toEqual([
      "read_file",
      "submit_review",
      "agent_change_mode",
    ]);
    expect(catalog.toolsFor(general)[1]).toBe(lookupTool.definition);
    // One array per mode, which adapters and stores cache their conversions and digests on.
    expect(catalog.toolsFor(general)).toBe(catalog.toolsFor(general));
    expect(Object.isFrozen(catalog.toolsFor(general))).toBe(true);
    expect(catalog.conversationContext(undefined)?.id).toBe("default");
    expect(catalog.conversationContext("reviewing")?.id).toBe("reviewing");
    expect(catalog.conversationContext("nope")).toBeUndefined();
    const reviewing = catalog.conversationContext("reviewing");
    const stateless = catalog.conversationContext("stateless");
    if (!reviewing || !stateless) throw new Error("contexts missing");
    expect(catalog.defaultModeOf(reviewing).id).toBe("review");
    expect(catalog.defaultModeOf(stateless).id).toBe("general");
    expect(catalog.serverTools.names).toEqual(["agent_change_mode", "lookup"]);
  });

  it("does not offer agent_change_mode twice when a mode lists it", () => {
    const config: AgentCatalogConfig = {
      ...TEST_CATALOG,
      modes: [{ ...general, tools: ["agent_change_mode", "read_file"] }, review],
    };
    const created = AgentCatalog.create(config, [lookupTool as ServerTool]);
    if (!created.successful) throw new Error(created.errors[0].message);
    expect(created.result.toolsFor(created.result.modes.get("general")).map((tool) => tool.name)).toEqual([
      "agent_change_mode",
      "read_file",
    ]);
  });

  it("names duplicate ids with their path", () => {
    const config: AgentCatalogConfig = {
      conversationContexts: [...TEST_CATALOG.conversationContexts, { ...defaultContext }],
      modes: [general, review, { ...general }],
      clientTools: [...TEST_CATALOG.clientTools, { ...readFile }],
    };
    expect(fieldsOf(config)).toEqual([
      { path: "conversationContexts[3]", message: 'repeats the id "default"' },
      { path: "modes[2]", message: 'repeats the id "general"' },
      { path: "clientTools[2]", message: 'repeats the id "read_file"' },
    ]);
  });

  it("names a mode tool that is neither a client nor a server tool", () => {
    const config: AgentCatalogConfig = {
      ...TEST_CATALOG,
      modes: [general, { ...review, tools: ["read_file", "submit_review", "deploy"] }],
    };
    expect(fieldsOf(config)).toEqual([
      { path: "modes[1].tools[2]", message: 'names "deploy", which is neither a client nor a server tool' },
    ]);
    // Without the lookup executor, general's "lookup" is unknown too.
    expect(fieldsOf(TEST_CATALOG, [])).toEqual([
      { path: "modes[0].tools[1]", message: 'names "lookup", which is neither a client nor a server tool' },
    ]);
  });

  it("names a toolChoice that is not one of the mode's tools", () => {
    const config: AgentCatalogConfig = {
      ...TEST_CATALOG,
      modes: [{ ...general, toolChoice: "submit_review" }, review],
    };
    expect(fieldsOf(config)).toEqual([
      {
        path: "modes[0].toolChoice",
        message: 'names "submit_review", which is not one of the mode\'s tools',
      },
    ]);
    const changeMode = AgentCatalog.create(
      { ...TEST_CATALOG, modes: [{ ...general, toolChoice: "agent_change_mode" }, review] },
      [lookupTool as ServerTool],
    );
    expect(changeMode.successful).toBe(true);
  });

  it("names a defaultMode that is not a mode, and a context without defaultMode when there is no general mode", () => {
    const missing: AgentCatalogConfig = {
      ...TEST_CATALOG,
      conversationContexts: [
        defaultContext,
        statelessContext,
        { ...reviewingContext, defaultMode: "design" },
      ],
    };
    expect(fieldsOf(missing)).toEqual([
      {
        path: "conversationContexts[2].defaultMode",
        message: 'names the mode "design", which is not in modes',
      },
    ]);
    const noGeneral: AgentCatalogConfig = { ...TEST_CATALOG, modes: [review] };
    expect(fieldsOf(noGeneral)).toEqual([
      {
        path: "conversationContexts[0].defaultMode",
        message: 'names the mode "general", which is not in modes',
      },
      { path: "conversationContexts[1]", message: 'names the mode "general", which is not in modes' },
    ]);
  });

  it("names a client tool that has a server tool's name", () => {
    const config: AgentCatalogConfig = {
      ...TEST_CATALOG,
      clientTools: [
        ...TEST_CATALOG.clientTools,
        { name: "lookup", description: "shadow", parameters: { type: "object" } },
        { name: "agent_change_mode", description: "shadow", parameters: { type: "object" } },
      ],
    };
    expect(fieldsOf(config)).toEqual([
      { path: "clientTools[2].name", message: "is the name of a server tool (lookup)" },
      { path: "clientTools[3].name", message: "is the name of a server tool (agent_change_mode)" },
    ]);
  });

  it("requires at least one conversation context", () => {
    expect(fieldsOf({ ...TEST_CATALOG, conversationContexts: [] })).toEqual([
      { path: "conversationContexts", message: "must hold at least one conversation context" },
    ]);
  });

  it("names every problem at once in the message", () => {
    const created = AgentCatalog.create(
      { conversationContexts: [], modes: [{ ...general, tools: ["nope"] }], clientTools: [] },
      [],
    );
    expect(!created.successful && created.errors[0].message).toBe(
      'Invalid agent catalog: conversationContexts must hold at least one conversation context; modes[0].tools[0] names "nope", which is neither a client nor a server tool',
    );
  });
});
