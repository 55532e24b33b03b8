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

/** Every broken cross-reference of the catalog, in the order the config reads. */
function checkCatalog(config: AgentCatalogConfig, serverTools: readonly ServerTool[]): FieldError[] {
  const serverToolNames = new Set([
    CHANGE_MODE_TOOL_NAME,
    ...serverTools.map((tool) => tool.definition.name),
  ]);
  const toolNames = new Set([...serverToolNames, ...config.clientTools.map((tool) => tool.name)]);
  return [
    ...serverTools
      .filter((tool) => tool.definition.name === APPROVAL_TOOL_NAME)
      .map(() => ({
        path: "serverTools",
        message: `may not name a tool ${APPROVAL_TOOL_NAME}, which is reserved`,
      })),
    ...(config.conversationContexts.length === 0
      ? [{ path: "conversationContexts", message: "must hold at least one conversation context" }]
      : []),
    ...repeatedIds(
      config.conversationContexts.map((context) => context.id),
      "conversationContexts",
    ),
    ...repeatedIds(
      config.modes.map((mode) => mode.id),
      "modes",
    ),
    ...repeatedIds(
      config.clientTools.map((tool) => tool.name),
      "clientTools",
    ),
    ...config.clientTools.flatMap((tool, index) => clientToolNameErrors(tool.name, index, serverToolNames)),
    ...defaultModeErrors(config.conversationContexts, new Set(config.modes.map((mode) => mode.id))),
    ...config.modes.flatMap((mode, index) => modeToolErrors(mode, index, toolNames)),
  ];
}

/** Each id that repeats an earlier one, at its index. */
function repeatedIds(ids: readonly string[], path: string): FieldError[] {
  const seen = new Set<string>();
  return ids.flatMap((id, index) => {
    const repeated = seen.has(id);
    seen.add(id);
    return repeated ? [{ path: `${path}[${index}]`, message: `repeats the id ${JSON.stringify(id)}` }] : [];
  });
}

/** A client tool may take neither the approval tool's name nor a server tool's. */
function clientToolNameErrors(
  name: string,
  index: number,
  serverToolNames: ReadonlySet<string>,
): FieldError[] {
  const errors: FieldError[] = [];
  if (name === APPROVAL_TOOL_NAME) {
    errors.push({
      path: `clientTools[${index}].name`,
      message: `is reserved: ${APPROVAL_TOOL_NAME} is how the service asks a client to approve a call`,
    });
  }
  if (serverToolNames.has(name)) {
    errors.push({ path: `clientTools[${index}].name`, message: `is the name of a server tool (${name})` });
  }
  return errors;
}

/** Each context's default mode (named, or the default one) must be a configured mode. */
function defaultModeErrors(
  contexts: readonly ConversationContext[],
  modeIds: ReadonlySet<string>,
): FieldError[] {
  return contexts.flatMap((context, index) => {
    const modeId = context.defaultMode ?? DEFAULT_MODE_ID;
    if (modeIds.has(modeId)) return [];
    const path = context.defaultMode
      ? `conversationContexts[${index}].defaultMode`
      : `conversationContexts[${index}]`;
    return [{ path, message: `names the mode ${JSON.stringify(modeId)}, which is not in modes` }];
  });
}

/** A mode's tools must be known, and its forced tool choice one of them (or `agent_change_mode`). */
function modeToolErrors(mode: Mode, index: number, toolNames: ReadonlySet<string>): FieldError[] {
  const errors: FieldError[] = mode.tools.flatMap((name, toolIndex) =>
    toolNames.has(name)
      ? []
      : [
          {
            path: `modes[${index}].tools[${toolIndex}]`,
            message: `names ${JSON.stringify(name)}, which is neither a client nor a server tool`,
          },
        ],
  );
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
  return errors;
}
