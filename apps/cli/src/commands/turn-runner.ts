import { homedir } from "node:os";
import type { ApprovalAnswer, ApprovalRequest, AptixResult } from "@aptix/client";
import type { FileRef, FinalResponse, InvokeWarning, WarningCode } from "@aptix/contracts";
import { cliCommand } from "../cli-command.js";
import type { LineReader } from "../terminal/line-reader.js";
import { patchPreview } from "../terminal/patch-preview.js";
import { plural } from "../terminal/plural.js";
import type { Styled } from "../terminal/terminal.js";
import { terminalTools } from "../terminal/terminal-tools.js";
import type { PatchRequest } from "../tools/apply-patch-tool.js";
import { ApprovalCall } from "../tools/approval-call.js";
import { WorkspaceRoot } from "../workspace/workspace-root.js";
import type { CliContext } from "./cli-context.js";
import { TurnStopped } from "./turn-stopped.js";

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
  /**
   * The calls the user answered "always" for (`ApprovalCall.alwaysKey`: the tool and its argument names), and the
   * session that holds for (chat's `/new` ends it).
   */
  #alwaysApproved = { sessionId: "", calls: new Set<string>() };
  /** The running turn's signal: stopping the turn withdraws the question it asks. */
  #signal: AbortSignal | undefined;

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

  /**
   * Runs one user turn to its end; the answer is returned, and a failure printed. When `signal` aborts, the turn
   * is cancelled on the service and `TurnStopped` thrown.
   */
  async run(
    instruction: string,
    signal?: AbortSignal,
  ): Promise<{ turnId: string; answer: AptixResult<FinalResponse> }> {
    const { options, client, terminal } = this.#context;
    const turnId = crypto.randomUUID();
    this.#signal = signal;
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
              `(conversation compacted: ${tokensBefore} → ${plural(tokensAfter, "token")} of context)`,
            ),
          );
        },
        ...(signal ? { signal } : {}),
      })
      .catch(async (error: unknown) => {
        if (!signal?.aborted) throw error;
        // Stopped here: the turn stops on the server too, and the session is free before the next prompt.
        const cancelled = await client.cancel({ sessionId: this.sessionId, turnId }).catch(() => undefined);
        throw new TurnStopped(turnId, cancelled?.successful === true, { cause: error });
      });
    terminal.endLine();
    this.#warn(answer.warnings);
    if (answer.successful) this.#listFiles(answer.result.files ?? []);
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
    const answer = await this.#reader().next(
      terminal.style("yellow", "Apply this patch? [y/N] "),
      this.#signal,
    );
    return answer !== null && /^y(es)?$/i.test(answer.trim());
  }

  /**
   * Asks whether a server tool that asks first may run, showing every argument, unless `--yes` or an earlier
   * "always" for the tool with the same argument names in this session. A call whose arguments name a path
   * outside the workspace is asked about every time; with `--yes` and no terminal on stdin it is declined, saying
   * so. No answer (stdin closed, Ctrl-C) declines.
   */
  async #approve({ tool, argumentsJson, server }: ApprovalRequest): Promise<ApprovalAnswer> {
    const { options, terminal, streams } = this.#context;
    if (this.#alwaysApproved.sessionId !== this.sessionId)
      this.#alwaysApproved = { sessionId: this.sessionId, calls: new Set() };
    const call = new ApprovalCall(tool, argumentsJson, [options.workspaceDir, this.#root.path], homedir());
    const where = server === null ? "" : ` (MCP server ${server})`;
    // The arguments come from the model: `compose` shows their control and invisible characters escaped.
    const argumentLines = call.arguments.map(
      ({ name, value }) => terminal.compose`  ${terminal.style("dim", `${name}:`)} ${value}`,
    );
    terminal.endLine();
    const outside = call.outsidePaths.length > 0;
    if (!outside && (options.yes || this.#alwaysApproved.calls.has(call.alwaysKey))) {
      terminal.line(
        terminal.compose`${terminal.style("dim", "approved")} ${terminal.style("bold", tool)}${where}`,
      );
      for (const line of argumentLines) terminal.line(line);
      return true;
    }
    terminal.line(terminal.compose`Run ${terminal.style("bold", tool)}${where} with:`);
    for (const line of argumentLines) terminal.line(line);
    if (outside) {
      terminal.line(
        terminal.compose`${terminal.style("yellow", "Its arguments name")} ${call.outside}${terminal.style("yellow", ": aptix asks every time, even with --yes or always.")}`,
      );
      if (options.yes && streams.stdin.isTTY !== true)
        return {
          approved: false,
          message: `Its arguments name ${call.outside}: aptix asks the user about every such call, even with --yes, and stdin is not a terminal to ask on.`,
        };
    }
    const answer = await this.#reader().next(
      terminal.compose`Run ${terminal.style("bold", tool)}? ${terminal.style("yellow", "[y]es / [n]o / [a]lways this session ")}`,
      this.#signal,
    );
    const choice = answer?.trim().toLowerCase() ?? "";
    if (/^a(lways)?$/.test(choice)) this.#alwaysApproved.calls.add(call.alwaysKey);
    return /^(y(es)?|a(lways)?)$/.test(choice);
  }

  /**
   * The files the turn's tools made (a server tool's `create_file`), on stderr as the warnings: each one's name,
   * type, size and address, then how to download them.
   */
  #listFiles(files: readonly FileRef[]): void {
    const { terminal, options, streams } = this.#context;
    if (files.length === 0) return;
    const line = (text: Styled) => streams.stderr.write(`${text.text}\n`);
    line(
      terminal.style(
        "bold",
        files.length === 1 ? "The turn made a file:" : `The turn made ${files.length} files:`,
      ),
    );
    const urls = files.map((file) => fileUrl(file.url, options.url));
    files.forEach((file, index) => {
      line(
        terminal.compose`  ${terminal.style("bold", file.name)} ${terminal.style("dim", `(${file.mimeType}, ${plural(file.sizeBytes, "byte")})`)} ${urls[index] ?? ""}`,
      );
    });
    const auth = options.apiKey === undefined ? "" : ' -H "Authorization: Bearer $APTIX_API_KEY"';
    line(terminal.compose`${terminal.style("dim", `To download one: curl -fOJ${auth}`)} <address>`);
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

/** A file's address as the service gave it (often the path alone), made whole with the service's URL. */
function fileUrl(url: string, service: string): string {
  return URL.canParse(url, service) ? new URL(url, service).href : url;
}
