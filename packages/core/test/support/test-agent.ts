import type {
  AgentExecuteRequest,
  AgentExecuteResponse,
  InvokeFailure,
  InvokeResult,
} from "@aptix/contracts";
import { type TurnEvent, validateAgentExecuteRequest } from "@aptix/contracts";
import type { AgentCatalogConfig } from "../../src/catalog/agent-catalog.js";
import type { AgentServiceOptions } from "../../src/entry/agent-service.js";
import {
  type FixedContextChunk,
  InMemoryContextRetriever,
} from "../../src/in-memory/in-memory-context-retriever.js";
import { InMemoryFileStore } from "../../src/in-memory/in-memory-file-store.js";
import { inMemorySessionStores } from "../../src/in-memory/in-memory-session-stores.js";
import type { FileStore, LlmCallOptions, LlmRequest, LlmResponse } from "../../src/index.js";
import {
  AgentCatalog,
  AgentService,
  type ServerTool,
  type SessionStores,
  type TurnWrite,
} from "../../src/index.js";
import { ManualClock } from "../../src/testing/manual-clock.js";
import type { ScenarioStoreFactory } from "../../src/testing/scenario-stores.js";
import { ScriptedLlmProvider } from "../../src/testing/scripted-llm-provider.js";

export const PRINCIPAL = "alice";

export const TEST_CATALOG: AgentCatalogConfig = {
  conversationContexts: [
    {
      id: "default",
      bootPrompt: "You are Aptix.",
      model: "gpt-test",
      provider: "scripted",
      defaultMode: "general",
    },
    { id: "stateless", bootPrompt: "You are Aptix (replayed).", model: "claude-test", provider: "stateless" },
    {
      id: "reviewing",
      bootPrompt: "You review code.",
      model: "gpt-test",
      provider: "scripted",
      defaultMode: "review",
    },
  ],
  modes: [
    {
      id: "general",
      displayName: "General",
      instructions: "Help with anything.",
      welcomeMessage: "Back to general work.",
      tools: ["read_file", "lookup"],
      toolChoice: null,
    },
    {
      id: "review",
      displayName: "Code Review",
      instructions: "Review the code you are shown.",
      welcomeMessage: "Switched to code review.",
      tools: ["read_file", "submit_review"],
      toolChoice: "submit_review",
    },
  ],
  clientTools: [
    {
      name: "read_file",
      description: "Read a workspace file.",
      parameters: { type: "object", properties: { path: { type: "string" } } },
    },
    { name: "submit_review", description: "Submit a review.", parameters: { type: "object" } },
  ],
};

/** A server tool for tests: echoes its arguments, or throws when asked to. */
export const lookupTool: ServerTool<{ query: string; explode?: boolean }> = {
  definition: {
    name: "lookup",
    description: "Look something up on the server.",
    parameters: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
  },
  parseArguments(args) {
    const query = (args as { query?: unknown }).query;
    if (typeof query !== "string") return { ok: false, message: "query must be a string" };
    return { ok: true, value: { query, explode: (args as { explode?: boolean }).explode === true } };
  },
  async execute(args, context) {
    if (args.explode) throw new Error("lookup backend is down");
    await context.files.keep({
      name: "answer.txt",
      mimeType: "text/plain",
      content: new TextEncoder().encode(`answer to ${args.query}`),
    });
    return { result: { found: `answer to ${args.query}` } };
  },
};

/** A held call: `entered` resolves with its input once the call is waiting; `release` lets it go on. */
interface HeldCall<T = LlmRequest> {
  entered: Promise<T>;
  release(): void;
}

/** Calls a test holds, in order: `hold` holds the next call not held yet, `pass` waits while it is held. */
class CallHolds<T> {
  readonly #holds: Array<{ entered: (input: T) => void; gate: Promise<void> }> = [];

  hold(): HeldCall<T> {
    let entered!: (input: T) => void;
    let release!: () => void;
    const enteredPromise = new Promise<T>((resolve) => {
      entered = resolve;
    });
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.#holds.push({ entered, gate });
    return { entered: enteredPromise, release };
  }

  async pass(input: T): Promise<void> {
    const hold = this.#holds.shift();
    if (hold) {
      hold.entered(structuredClone(input));
      await hold.gate;
    }
  }
}

/**
 * A ScriptedLlmProvider whose next calls can be held until the test releases them: a turn that is still
 * talking to its provider (SESSION_BUSY), or one whose instance crashed mid-call (lease expiry).
 */
class GatedScriptedProvider extends ScriptedLlmProvider {
  readonly #holds = new CallHolds<LlmRequest>();

  /** Holds the next call that is not held yet. */
  holdNextCall(): HeldCall {
    return this.#holds.hold();
  }

  override async call(request: LlmRequest, options?: LlmCallOptions): Promise<InvokeResult<LlmResponse>> {
    await this.#holds.pass(request);
    return super.call(request, options);
  }
}

/** Session stores whose next turn writes can be held until the test releases them. */
type GatedSessionStores = SessionStores & {
  /**
   * Holds the next transition not held yet, before it reaches the store: a request that read the session,
   * then applies its transition only after other requests ran (two identical requests racing).
   */
  holdNextClaim(): HeldCall<HeldClaim>;
};

/** What a held write shows the test: the session it writes. */
type HeldClaim = Pick<TurnWrite, "key">;

function gatedSessionStores(stores: SessionStores): GatedSessionStores {
  const holds = new CallHolds<HeldClaim>();
  const { turns } = stores;
  const write = async (claim: TurnWrite) => {
    await holds.pass({ key: claim.key });
    return turns.write(claim);
  };
  const gated = new Proxy(turns, {
    get(target, property) {
      if (property === "write") return write;
      const value: unknown = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { ...stores, turns: gated, holdNextClaim: () => holds.hold() };
}

export interface TestAgent {
  service: AgentService;
  provider: GatedScriptedProvider;
  stateless: GatedScriptedProvider;
  store: GatedSessionStores;
  files: FileStore;
  retriever: InMemoryContextRetriever;
  clock: ManualClock;
  /** Validates like the server, then executes as PRINCIPAL (or `principal`). */
  execute(request: AgentExecuteRequest, principal?: string): Promise<InvokeResult<AgentExecuteResponse>>;
}

export async function createTestAgent(
  options: {
    store?: SessionStores;
    chunks?: FixedContextChunk[];
    config?: AgentCatalogConfig;
    /** Server tools besides `agent_change_mode`; `[lookupTool]` unless given. */
    serverTools?: ServerTool[];
  } & Partial<AgentServiceOptions> = {},
): Promise<TestAgent> {
  const clock = new ManualClock(new Date("2026-01-01T00:00:00Z"));
  const stores = options.store
    ? { store: options.store }
    : ((await globalThis.aptixScenarioStores?.(clock)) ?? inMemoryStores(clock));
  const created = AgentCatalog.create(
    options.config ?? TEST_CATALOG,
    options.serverTools ?? [lookupTool as ServerTool],
  );
  if (!created.successful) throw new Error(created.errors[0].message);
  const provider = new GatedScriptedProvider({ id: "scripted" });
  const stateless = new GatedScriptedProvider({ id: "stateless", storesResponses: false });
  const store = gatedSessionStores(stores.store);
  const files = stores.files ?? new InMemoryFileStore(clock);
  const retriever = new InMemoryContextRetriever(options.chunks ?? []);
  let ids = 0;
  const service = new AgentService({
    catalog: created.result,
    providers: [provider, stateless],
    files,
    retriever,
    clock,
    ids: { newId: (prefix) => `${prefix}_${++ids}` },
    ...(stores.events ? { events: stores.events } : {}),
    ...options,
    // After `options`: a store given there is held behind the gate too.
    store,
  });
  return {
    service,
    provider,
    stateless,
    store,
    files,
    retriever,
    clock,
    async execute(request, principal = PRINCIPAL) {
      const valid = validateAgentExecuteRequest(request);
      if (!valid.successful) throw new Error(`test sent an invalid request: ${valid.errors[0].message}`);
      return service.execute(valid.result, principal);
    },
  };
}

/** The in-memory session stores and the file store sharing their state. */
function inMemoryStores(clock: ManualClock): Awaited<ReturnType<ScenarioStoreFactory>> {
  const store = inMemorySessionStores(clock);
  return { store, files: store.files };
}

/** Every event of a stream (or follower), once it has ended. */
export async function collect(events: AsyncIterable<TurnEvent>): Promise<TurnEvent[]> {
  const seen: TurnEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

/** Narrows a result to its response, failing the test with the errors otherwise. */
export function responseOf(result: InvokeResult<AgentExecuteResponse>): AgentExecuteResponse {
  if (!result.successful) throw new Error(`expected success, got ${JSON.stringify(result.errors)}`);
  return result.result;
}

/** The file id behind a FileRef url (`/v1/files/{fileId}`). */
export function fileIdOf(url: string): string {
  const id = url.split("/").at(-1);
  if (!url.startsWith("/v1/files/") || !id) throw new Error(`not a file url: ${url}`);
  return id;
}

/** TEST_CATALOG with some modes replaced or added (matched by id), for agents that need other modes. */
export function catalogWithModes(...modes: AgentCatalogConfig["modes"]): AgentCatalogConfig {
  const byId = new Map(TEST_CATALOG.modes.map((mode) => [mode.id, mode]));
  for (const mode of modes) byId.set(mode.id, mode);
  return { ...TEST_CATALOG, modes: [...byId.values()] };
}

/** TEST_CATALOG with `settings` (a context window, a compaction model) on every conversation context. */
export function catalogWithContextSettings(
  settings: Partial<AgentCatalogConfig["conversationContexts"][number]>,
): AgentCatalogConfig {
  const conversationContexts = TEST_CATALOG.conversationContexts.map((context) => ({
    ...context,
    ...settings,
  }));
  return { ...TEST_CATALOG, conversationContexts };
}

/** Narrows any result to its value, failing the test with the errors otherwise. */
export function resultOf<T>(result: InvokeResult<T>): T {
  if (!result.successful) throw new Error(`expected success, got ${JSON.stringify(result.errors)}`);
  return result.result;
}

/** The errors of a failed result, failing the test when it succeeded. */
export function errorsOf(result: InvokeResult<unknown>): InvokeFailure["errors"] {
  if (result.successful) throw new Error(`expected a failure, got ${JSON.stringify(result.result)}`);
  return result.errors;
}
