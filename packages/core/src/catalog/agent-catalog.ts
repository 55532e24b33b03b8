import { APPROVAL_TOOL_NAME, type FieldError, fail, type InvokeResult, ok } from "@aptix/contracts";
import type { ServerTool } from "../ports/server-tool.js";
import type { ToolDefinition } from "../records/tool-definition.js";
import { CHANGE_MODE_TOOL_NAME, createChangeModeTool } from "./change-mode-tool.js";
import { type ConversationContext, DEFAULT_MODE_ID } from "./conversation-context.js";
import type { Mode } from "./mode.js";
import { ModeCatalog } from "./mode-catalog.js";
import { ServerToolRegistry } from "./server-tool-registry.js";

/** What an operator configures (docs/configuration.md, the `APTIX_CONFIG` file). */
export interface AgentCatalogConfig {
  conversationContexts: ConversationContext[];
  modes: Mode[];
  clientTools: ToolDefinition[];
}

/**
 * Everything a turn looks up: conversation contexts, modes, client tool definitions and server tools,
 * checked against each other once, at start-up.
 */
export class AgentCatalog {
  readonly modes: ModeCatalog;
  readonly serverTools: ServerToolRegistry;
  readonly #contexts: Map<string, ConversationContext>;
  readonly #clientTools: Map<string, ToolDefinition>;
  readonly #defaultContextId: string;
  /** Each mode's tools, built once: the same array for every call, so adapters and stores can key caches on it. */
  readonly #toolsByMode = new WeakMap<Mode, ToolDefinition[]>();

  private constructor(config: AgentCatalogConfig, extraServerTools: readonly ServerTool[]) {
    this.modes = new ModeCatalog(config.modes);
    this.serverTools = new ServerToolRegistry([createChangeModeTool(this.modes), ...extraServerTools]);
    this.#contexts = new Map(config.conversationContexts.map((context) => [context.id, context]));
    this.#clientTools = new Map(config.clientTools.map((tool) => [tool.name, tool]));
    this.#defaultContextId = config.conversationContexts[0]?.id ?? "";
  }

  /** Checks every cross-reference and answers VALIDATION_FAILED naming each bad key. */
  static create(
    config: AgentCatalogConfig,
    serverTools: readonly ServerTool[] = [],
  ): InvokeResult<AgentCatalog> {
    const errors = checkCatalog(config, serverTools);
    if (errors.length > 0) {
      return fail(
        "VALIDATION_FAILED",
        `Invalid agent catalog: ${errors.map((e) => `${e.path} ${e.message}`).join("; ")}`,
        {
          fields: errors,
        },
      );
    }
    return ok(new AgentCatalog(config, serverTools));
  }

  get conversationContexts(): ConversationContext[] {
    return [...this.#contexts.values()];
  }

  /** The named context; the first configured one when the request names none. */
  conversationContext(id: string | undefined): ConversationContext | undefined {
    return this.#contexts.get(id ?? this.#defaultContextId);
  }

  /** The mode a new session of this context starts in (AGN-011 §3.1). */
  defaultModeOf(context: ConversationContext): Mode {
    return this.modes.get(context.defaultMode ?? DEFAULT_MODE_ID);
  }

  /**
   * The mode's tools, as offered to the model: its own list, then `agent_change_mode` (AGN-011 §4.2–4.3). The
   * same frozen array on every call for a mode.
   */
  toolsFor(mode: Mode): ToolDefinition[] {
    const known = this.#toolsByMode.get(mode);
    if (known) return known;
    const names = mode.tools.includes(CHANGE_MODE_TOOL_NAME)
      ? mode.tools
      : [...mode.tools, CHANGE_MODE_TOOL_NAME];
    const tools = names.map((name) => {
      const definition = this.serverTools.get(name)?.definition ?? this.#clientTools.get(name);
      if (!definition) throw new Error(`tool ${JSON.stringify(name)} of mode ${mode.id} is unknown`);
      return definition;
    });
    Object.freeze(tools);
    this.#toolsByMode.set(mode, tools);
    return tools;
  }
}

function checkCatalog(config: AgentCatalogConfig, serverTools: readonly ServerTool[]): FieldError[] {
  const errors: FieldError[] = [];
  const duplicates = (ids: string[], path: string) => {
    const seen = new Set<string>();
    ids.forEach((id, index) => {
      if (seen.has(id))
        errors.push({ path: `${path}[${index}]`, message: `repeats the id ${JSON.stringify(id)}` });
      seen.add(id);
    });
  };
  const modeIds = new Set(config.modes.map((mode) => mode.id));
  const serverToolNames = new Set([
    CHANGE_MODE_TOOL_NAME,
    ...serverTools.map((tool) => tool.definition.name),
  ]);
  const toolNames = new Set([...serverToolNames, ...config.clientTools.map((tool) => tool.name)]);

  serverTools.forEach((tool) => {
    if (tool.definition.name === APPROVAL_TOOL_NAME) {
      errors.push({
        path: "serverTools",
        message: `may not name a tool ${APPROVAL_TOOL_NAME}, which is reserved`,
      });
    }
  });
  if (config.conversationContexts.length === 0) {
    errors.push({ path: "conversationContexts", message: "must hold at least one conversation context" });
  }
  duplicates(
    config.conversationContexts.map((context) => context.id),
    "conversationContexts",
  );
  duplicates(
    config.modes.map((mode) => mode.id),
    "modes",
  );
  duplicates(
    config.clientTools.map((tool) => tool.name),
    "clientTools",
  );
  config.clientTools.forEach((tool, index) => {
    if (tool.name === APPROVAL_TOOL_NAME) {
      errors.push({
        path: `clientTools[${index}].name`,
        message: `is reserved: ${APPROVAL_TOOL_NAME} is how the service asks a client to approve a call`,
      });
    }
    if (serverToolNames.has(tool.name)) {
      errors.push({
        path: `clientTools[${index}].name`,
        message: `is the name of a server tool (${tool.name})`,
      });
    }
  });
  config.conversationContexts.forEach((context, index) => {
    const modeId = context.defaultMode ?? DEFAULT_MODE_ID;
    if (!modeIds.has(modeId)) {
      const path = context.defaultMode
        ? `conversationContexts[${index}].defaultMode`
        : `conversationContexts[${index}]`;
      errors.push({ path, message: `names the mode ${JSON.stringify(modeId)}, which is not in modes` });
    }
  });
  config.modes.forEach((mode, index) => {
    mode.tools.forEach((name, toolIndex) => {
      if (!toolNames.has(name)) {
        errors.push({
          path: `modes[${index}].tools[${toolIndex}]`,
          message: `names ${JSON.stringify(name)}, which is neither a client nor a server tool`,
        });
      }
    });
    if (
      mode.toolChoice !== null &&
      mode.toolChoice !== CHANGE_MODE_TOOL_NAME &&
      !mode.tools.includes(mode.toolChoice)
    ) {
      errors.push({
        path: `modes[${index}].toolChoice`,
        message: `names ${JSON.stringify(mode.toolChoice)}, which is not one of the mode's tools`,
      });
    }
  });
  return errors;
}
