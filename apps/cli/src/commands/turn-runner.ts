import type { ApprovalRequest, AptixResult } from "@aptix/client";
import type { FinalResponse, InvokeWarning, WarningCode } from "@aptix/contracts";
import { cliCommand } from "../cli-command.js";
import type { LineReader } from "../terminal/line-reader.js";
import { patchPreview } from "../terminal/patch-preview.js";
import type { Styled } from "../terminal/terminal.js";
import { terminalTools } from "../terminal/terminal-tools.js";
import type { PatchRequest } from "../tools/apply-patch-tool.js";
import { WorkspaceRoot } from "../workspace/workspace-root.js";
import type { CliContext } from "./cli-context.js";

/**
 * Runs user turns in the session with the workspace's tools: streams the text to the terminal, prints a line
 * per tool call, shows each patch and asks before applying it (unless `--yes`, but for project hooks).
 */
export class TurnRunner {
  readonly #context: CliContext;
  readonly #root: WorkspaceRoot;
  readonly #reader: () => LineReader;
  /** The session the turns run in: `--session`'s, or a new one; chat's `/new` moves on to another. */
  sessionId: string;
  /** The tools the user answered "always" for, and the session that holds for (chat's `/new` ends it). */
  #alwaysApproved = { sessionId: "", tools: new Set<string>() };

  private constructor(context: CliContext, root: WorkspaceRoot, reader: () => LineReader) {
    this.#context = context;
    this.#root = root;
    this.#reader = reader;
    this.sessionId = context.options.sessionId;
  }

  /** `reader` gives the line reader that patch confirmations are asked on (made when first needed). */
  static async open(context: CliContext, reader: () => LineReader): Promise<TurnRunner> {
    const { workspaceDir, allowIgnored, configFile } = context.options;
    return new TurnRunner(
      context,
      await WorkspaceRoot.open(workspaceDir, { allowIgnored, configFile }),
      reader,
    );
  }

  /** Runs one user turn to its end; the answer is returned, and a failure printed. */
  async run(
    instruction: string,
    signal?: AbortSignal,
  ): Promise<{ turnId: string; answer: AptixResult<FinalResponse> }> {
    const { options, client, terminal } = this.#context;
    const turnId = crypto.randomUUID();
    const tools = terminalTools(this.#root, terminal, (request) => this.#confirm(request));
    terminal.waiting();
    const answer = await client
      .runTurn({
        sessionId: this.sessionId,
        turnId,
        instruction,
        workspaceId: options.workspaceId,
        tools,
        approve: (request) => this.#approve(request),
        onTextDelta: (delta) => terminal.write(delta),
        onTextReset: () => terminal.endLine(),
        onCompacted: ({ tokensBefore, tokensAfter }) => {
          terminal.endLine();
          terminal.line(
            terminal.style(
              "dim",
              `(conversation compacted: ${tokensBefore} → ${tokensAfter} tokens of context)`,
            ),
          );
        },
        ...(signal ? { signal } : {}),
      })
      .catch(async (error: unknown) => {
        // Stopped here: the turn stops on the server too, and the session is free before the next prompt.
        if (signal?.aborted)
          await client.cancel({ sessionId: this.sessionId, turnId }).catch(() => undefined);
        throw error;
      });
    terminal.endLine();
    this.#warn(answer.warnings);
    if (!answer.successful) {
      for (const error of answer.errors)
        terminal.line(terminal.style("red", `${error.code}: ${error.message}`));
    }
    return { turnId, answer };
  }

  /**
   * Shows the patch and asks whether to apply it, unless `--yes`. A patch that changes a project hook is asked
   * about every time, `--yes` or not: with `--yes` and no terminal on stdin there is no one to ask (and a piped
   * line may be anything), so it is refused, saying so.
   */
  async #confirm({ patch, projectHooks }: PatchRequest): Promise<boolean> {
    const { options, terminal, streams } = this.#context;
    terminal.line(patchPreview(terminal, patch));
    if (projectHooks.length === 0 && options.yes) return true;
    if (projectHooks.length > 0) {
      const files = projectHooks.join(", ");
      terminal.line(
        terminal.compose`${terminal.style("yellow", "This patch changes files that run code when an editor or a tool opens the project (")}${files}${terminal.style("yellow", "): aptix asks every time, even with --yes.")}`,
      );
      if (options.yes && streams.stdin.isTTY !== true) {
        throw new Error(
          `The patch changes files that run code when an editor or a tool opens the project (${files}): aptix asks the user before every such write, even with --yes, and stdin is not a terminal to ask on. No file was changed.`,
        );
      }
    }
    const answer = await this.#reader().next(terminal.style("yellow", "Apply this patch? [y/N] "));
    return answer !== null && /^y(es)?$/i.test(answer.trim());
  }

  /**
   * Asks whether a server tool that asks first may run (DESIGN §16), unless `--yes` or an earlier "always" for
   * the tool in this session. No answer (stdin closed) declines.
   */
  async #approve({ tool, argumentsJson, server }: ApprovalRequest): Promise<boolean> {
    const { options, terminal } = this.#context;
    if (this.#alwaysApproved.sessionId !== this.sessionId)
      this.#alwaysApproved = { sessionId: this.sessionId, tools: new Set() };
    const where = server === null ? "" : ` (MCP server ${server})`;
    // The arguments come from the model: `compose` shows their control and invisible characters escaped.
    const call = terminal.compose`${terminal.style("bold", tool)}${where} ${shortened(argumentsJson)}`;
    if (options.yes || this.#alwaysApproved.tools.has(tool)) {
      terminal.line(terminal.compose`${terminal.style("dim", "approved")} ${call}`);
      return true;
    }
    terminal.endLine();
    const answer = await this.#reader().next(
      terminal.compose`Run ${call}? ${terminal.style("yellow", "[y]es / [n]o / [a]lways this session ")}`,
    );
    const choice = answer?.trim().toLowerCase() ?? "";
    if (/^a(lways)?$/.test(choice)) this.#alwaysApproved.tools.add(tool);
    return /^(y(es)?|a(lways)?)$/.test(choice);
  }

  /**
   * The answer's warnings, each with what fixes it where the CLI knows, on stderr: stdout keeps the answer alone
   * (`aptix run … > answer.md`).
   */
  #warn(warnings: readonly InvokeWarning[]): void {
    const { terminal, options, streams } = this.#context;
    const line = (text: Styled) => streams.stderr.write(`${text.text}\n`);
    for (const warning of warnings) {
      line(terminal.style("yellow", `warning ${warning.code}: ${warning.message}`));
      if (warning.code === ("WORKSPACE_NOT_FOUND" satisfies WarningCode)) {
        // The same command line finds the same workspace: the default one, or the one named.
        const index = `${cliCommand(streams.env)} index`;
        const command = options.workspaceGiven ? `${index} ${JSON.stringify(options.workspaceDir)}` : index;
        line(terminal.compose`${terminal.style("yellow", "To index it, run:")} ${command}`);
      }
    }
  }
}

/** A call's arguments as the prompt shows them: whole when short, else their start. */
function shortened(argumentsJson: string): string {
  const MAX = 200;
  return argumentsJson.length <= MAX ? argumentsJson : `${argumentsJson.slice(0, MAX)}…`;
}
