import { statSync } from "node:fs";
import { isAbsolute } from "node:path";
import {
  type AgentApp,
  type AgentContext,
  agent,
  type ClientCapabilities,
  type InitializeResponse,
  type LoadSessionRequest,
  type LoadSessionResponse,
  type McpServer,
  type NewSessionRequest,
  type NewSessionResponse,
  PROTOCOL_VERSION,
  type PromptRequest,
  type PromptResponse,
  RequestError,
  type SessionModeState,
  type SessionUpdate,
} from "@agentclientprotocol/sdk";
import type { AptixClient, AptixResult, AptixResultError } from "@aptix/client";
import {
  type AgentExecuteResponse,
  type ErrorCode,
  type FinalResponse,
  IdentifierSchema,
  type InvokeWarning,
  type ModeList,
  type WarningCode,
} from "@aptix/contracts";
import { cliCommand } from "../cli-command.js";
import { describeFailure } from "../commands/describe-failure.js";
import { workspaceIdOf } from "../workspace/workspace-id.js";
import { WorkspaceRoot } from "../workspace/workspace-root.js";
import { acpApprove } from "./acp-approvals.js";
import { ACP_COMMANDS, acpCommandOf, runCompact } from "./acp-commands.js";
import type { AcpSession } from "./acp-session.js";
import { acpTools } from "./acp-tools.js";
import { editorTextFiles } from "./editor-text-files.js";
import { promptInput } from "./prompt-input.js";
import { replayMessage, sendFiles } from "./replay.js";
import { SessionUpdates } from "./session-updates.js";
import { textContent, toolKindOf, toolTitleOf } from "./tool-call-view.js";

export interface AcpAgentOptions {
  client: AptixClient;
  /** The service's address, for messages about reaching it. */
  url: string;
  /** `--allow-ignored`: the tools may open what .gitignore ignores. */
  allowIgnored: boolean;
  /** `$APTIX_CONFIG`, absolute: a write to it is asked about every time, as a project hook is. */
  configFile: string | undefined;
  /** `agentInfo.version`: the CLI's. */
  version: string;
  /** A line for stderr: stdout carries nothing but the protocol. */
  log: (line: string) => void;
}

/** What the editor is told after `output_text.reset`: it cannot take back text it has shown. */
const REVISED_NOTE = "\n\n_(The answer above was revised; the new answer follows.)_\n\n";

const cancelled: PromptResponse = { stopReason: "cancelled" };

/**
 * `aptix acp`: the Agent Client Protocol agent an editor starts as a subprocess, backed by the service (a client
 * of it like `aptix chat`). One ACP session is one service session in the workspace the editor names; each prompt
 * is one user turn, streamed; the service's client tool calls run here, through the editor where it offers
 * (`fs/read_text_file`, `fs/write_text_file`, `session/request_permission`). The mode is the service's: it is
 * reported, never set.
 */
export class AcpAgent {
  readonly #options: AcpAgentOptions;
  readonly #sessions = new Map<string, AcpSession>();
  #capabilities: ClientCapabilities = {};

  constructor(options: AcpAgentOptions) {
    this.#options = options;
  }

  app(): AgentApp {
    return agent({ name: "aptix" })
      .onRequest("initialize", ({ params }) => {
        this.#capabilities = params.clientCapabilities ?? {};
        return this.#initialize();
      })
      .onRequest("session/new", ({ params, client }) => this.#guard(() => this.#newSession(params, client)))
      .onRequest("session/load", ({ params, client }) => this.#guard(() => this.#loadSession(params, client)))
      .onRequest("session/prompt", ({ params, client }) => this.#guard(() => this.#prompt(params, client)))
      .onRequest("session/set_mode", () => {
        throw RequestError.invalidRequest(
          undefined,
          "The mode is the service's: the agent changes it (agent_change_mode) and aptix acp reports it; an editor cannot set it.",
        );
      })
      .onNotification("session/cancel", ({ params }) => {
        const running = this.#sessions.get(params.sessionId)?.running;
        running?.controller.abort(new Error("Cancelled by the editor (session/cancel)."));
      });
  }

  #initialize(): InitializeResponse {
    return {
      protocolVersion: PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: true, audio: false, embeddedContext: true },
      },
      agentInfo: { name: "aptix", title: "Aptix", version: this.#options.version },
      authMethods: [],
    };
  }

  /**
   * Runs a handler, its failures as the editor shows them: a protocol error as it is, anything else (the service
   * cannot be reached, say) as -32603 saying what happened.
   */
  async #guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof RequestError) throw error;
      const message = describeFailure(error, this.#options.url);
      this.#options.log(message);
      throw new RequestError(-32603, message);
    }
  }

  async #newSession(params: NewSessionRequest, client: AgentContext): Promise<NewSessionResponse> {
    const session = await this.#open(crypto.randomUUID(), params.cwd, params.mcpServers, client);
    const { modes, defaultModeId } = await this.#modes();
    session.modeId = defaultModeId;
    session.modeDisplayName = displayNameOf(modes, defaultModeId);
    this.#sessions.set(session.sessionId, session);
    offerCommands(session);
    return { sessionId: session.sessionId, modes: modeState(modes, defaultModeId) };
  }

  /**
   * The service's session, in `cwd`, its conversation replayed before the answer. The service keeps a session from
   * its first turn on: one `session/new` opened and no prompt used is unknown to it, and loads empty, in the mode a
   * new session starts in.
   */
  async #loadSession(params: LoadSessionRequest, client: AgentContext): Promise<LoadSessionResponse> {
    const id = IdentifierSchema.safeParse(params.sessionId);
    if (!id.success)
      throw RequestError.invalidParams({ path: "sessionId" }, `sessionId ${id.error.issues[0]?.message}.`);
    const session = await this.#open(params.sessionId, params.cwd, params.mcpServers, client);
    const [found, { modes, defaultModeId }] = await Promise.all([
      this.#options.client.getSession(params.sessionId),
      this.#modes(),
    ]);
    const unused = !found.successful && found.errors[0].code === ("SESSION_NOT_FOUND" satisfies ErrorCode);
    if (!found.successful && !unused) throw serviceError(found.errors);
    session.modeId = found.successful ? found.result.mode : defaultModeId;
    session.modeDisplayName = found.successful
      ? found.result.modeDisplayName
      : displayNameOf(modes, defaultModeId);
    this.#sessions
      .get(params.sessionId)
      ?.running?.controller.abort(new Error("The session was loaded again."));
    this.#sessions.set(session.sessionId, session);
    if (found.successful) await this.#replay(session);
    offerCommands(session);
    return { modes: modeState(modes, session.modeId) };
  }

  /** The session in `cwd` (absolute, a directory, taken as given: no walk up to a git root). */
  async #open(
    sessionId: string,
    cwd: string,
    mcpServers: readonly McpServer[],
    client: AgentContext,
  ): Promise<AcpSession> {
    if (mcpServers.length > 0) {
      throw RequestError.invalidParams(
        { path: "mcpServers" },
        `aptix acp runs no MCP servers of the editor's (${mcpServers.map((server) => server.name).join(", ")}): the service's server tools are configured on the service. Send mcpServers: [].`,
      );
    }
    if (!isAbsolute(cwd) || !statSync(cwd, { throwIfNoEntry: false })?.isDirectory())
      throw RequestError.invalidParams({ path: "cwd" }, `cwd ${cwd} is not an absolute path to a directory.`);
    const { allowIgnored, configFile } = this.#options;
    const root = await WorkspaceRoot.open(cwd, { allowIgnored, configFile });
    const updates = new SessionUpdates(client, sessionId, this.#options.log);
    return {
      sessionId,
      editorRoot: cwd,
      workspaceId: workspaceIdOf(cwd),
      root,
      files: editorTextFiles({ client, sessionId, fs: this.#capabilities.fs, editorRoot: cwd }),
      updates,
      modeId: "",
      modeDisplayName: "",
      allowsEveryPatch: false,
      toolsApproved: new Set(),
      approvalsShown: new Set(),
      running: undefined,
    };
  }

  async #modes(): Promise<ModeList> {
    const answer = await this.#options.client.modes();
    if (!answer.successful) throw serviceError(answer.errors);
    return answer.result;
  }

  /** Every message of the session, page by page, as updates. */
  async #replay(session: AcpSession): Promise<void> {
    let cursor: string | undefined;
    do {
      const page = await this.#options.client.sessions.messages(session.sessionId, {
        limit: 100,
        ...(cursor === undefined ? {} : { cursor }),
      });
      if (!page.successful) throw serviceError(page.errors);
      for (const message of page.result.messages) await replayMessage(message, session.updates);
      cursor = page.result.nextCursor;
    } while (cursor !== undefined);
  }

  async #prompt(params: PromptRequest, client: AgentContext): Promise<PromptResponse> {
    const session = this.#sessions.get(params.sessionId);
    if (session === undefined)
      throw RequestError.invalidParams(
        { path: "sessionId" },
        `No session ${params.sessionId}: send session/new or session/load first.`,
      );
    if (session.running !== undefined)
      throw RequestError.invalidRequest(
        undefined,
        "A prompt of this session is still running: cancel it first.",
      );
    if (acpCommandOf(params.prompt) === "compact") {
      await runCompact(session, this.#options.client);
      return { stopReason: "end_turn" };
    }
    const input = promptInput(params.prompt, session.editorRoot);
    const turnId = crypto.randomUUID();
    const controller = new AbortController();
    session.running = { turnId, controller };
    const { signal } = controller;
    const { updates } = session;
    const service = this.#options.client;
    try {
      let answer: AptixResult<FinalResponse>;
      try {
        answer = await service.runTurn({
          sessionId: session.sessionId,
          turnId,
          workspaceId: session.workspaceId,
          ...input,
          tools: acpTools(session, client, signal),
          approve: acpApprove(session, client, signal),
          onTextDelta: (delta) => void updates.text(delta),
          onTextReset: () => void updates.text(REVISED_NOTE),
          onResponse: (response) => void updates.after(() => this.#followMode(session, response)),
          signal,
        });
      } catch (error) {
        if (!signal.aborted) throw error;
        // The turn stops on the service too, and the session is free for the next prompt once this answers.
        await service.cancel({ sessionId: session.sessionId, turnId }).catch((cancelError: unknown) => {
          this.#options.log(`cannot cancel turn ${turnId}: ${(cancelError as Error).message}`);
        });
        await updates.flushed();
        return cancelled;
      }
      await this.#warn(answer.warnings, session);
      if (!answer.successful) {
        await updates.flushed();
        if (answer.errors[0].code === ("TURN_CANCELLED" satisfies ErrorCode)) return cancelled;
        throw serviceError(answer.errors);
      }
      await this.#reportServerTools(answer.result, session);
      await sendFiles(answer.result.files ?? [], updates);
      await updates.flushed();
      return { stopReason: "end_turn" };
    } finally {
      if (session.running?.turnId === turnId) session.running = undefined;
    }
  }

  /** A round's answer in another mode than the one reported: the editor is told the service's current mode. */
  async #followMode(session: AcpSession, response: AgentExecuteResponse): Promise<SessionUpdate | undefined> {
    if (response.modeDisplayName === session.modeDisplayName) return undefined;
    const found = await this.#options.client.getSession(session.sessionId);
    if (!found.successful) return undefined;
    session.modeDisplayName = found.result.modeDisplayName;
    if (found.result.mode === session.modeId) return undefined;
    session.modeId = found.result.mode;
    return { sessionUpdate: "current_mode_update", currentModeId: session.modeId };
  }

  /** The tools the service ran during the turn, each as a finished `tool_call` with its result. */
  async #reportServerTools(result: FinalResponse, session: AcpSession): Promise<void> {
    for (const executed of result.toolResults ?? []) {
      const failed = executed.errorMessage !== undefined;
      const outcome = {
        toolCallId: executed.toolCallId,
        status: failed ? ("failed" as const) : ("completed" as const),
        content: [textContent(executed.errorMessage ?? executed.resultJson ?? "")],
      };
      // A call whose approval was asked is on the editor's screen already: it is updated, not shown again.
      await session.updates.send(
        session.approvalsShown.delete(executed.toolCallId)
          ? { sessionUpdate: "tool_call_update", ...outcome }
          : {
              sessionUpdate: "tool_call",
              title: toolTitleOf(executed.name, {}),
              kind: toolKindOf(executed.name),
              ...outcome,
            },
      );
    }
  }

  /** The turn's warnings as text the user reads, with the command that fixes a missing index. */
  async #warn(warnings: readonly InvokeWarning[], session: AcpSession): Promise<void> {
    for (const warning of warnings) {
      const fix =
        warning.code === ("WORKSPACE_NOT_FOUND" satisfies WarningCode)
          ? ` To index it, run: ${cliCommand(process.env)} index ${JSON.stringify(session.editorRoot)}`
          : "";
      await session.updates.text(`\n\n> Warning ${warning.code}: ${warning.message}${fix}\n`);
    }
  }
}

/** Tells the editor the session's commands once it knows the session (after the answer that names it). */
function offerCommands(session: AcpSession): void {
  setTimeout(
    () =>
      void session.updates.send({
        sessionUpdate: "available_commands_update",
        availableCommands: ACP_COMMANDS,
      }),
    0,
  );
}

function displayNameOf(modes: ModeList["modes"], modeId: string): string {
  return modes.find((mode) => mode.id === modeId)?.displayName ?? modeId;
}

function modeState(modes: ModeList["modes"], currentModeId: string): SessionModeState {
  return {
    currentModeId,
    availableModes: modes.map((mode) => ({ id: mode.id, name: mode.displayName })),
  };
}

/**
 * A failed service call as the JSON-RPC error the editor shows: -32603 with the first error's message, and every
 * error as `data`.
 */
function serviceError(errors: readonly AptixResultError[]): RequestError {
  return new RequestError(-32603, errors[0]?.message ?? "The service failed.", { errors });
}
