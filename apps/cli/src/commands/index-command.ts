import { join } from "node:path";
import { WORKSPACE_LIMITS, type WorkspaceDocument, WorkspaceDocumentSchema } from "@aptix/contracts";
import cliProgress from "cli-progress";
import { readTextFile } from "../workspace/text-file.js";
import { workspaceFiles } from "../workspace/workspace-files.js";
import { WorkspaceRoot } from "../workspace/workspace-root.js";
import { type CliContext, EXIT } from "./cli-context.js";

/** Bytes of contents in one request, well under the service's body limit however many documents it holds. */
const MAX_BATCH_BYTES = 16 * 1024 * 1024;

interface IndexTotals {
  workspaceId: string;
  files: number;
  upserted: number;
  unchanged: number;
  deleted: number;
  chunks: number;
  /** Files not pushed: binary, larger than a document may be, or a path or text the service cannot take. */
  skipped: Array<{ path: string; reason: string }>;
}

/**
 * `aptix index [dir]`: pushes the workspace's text files (as `list_files` sees them: .gitignore honoured, no
 * symlink out) in batches of at most 500 documents. The first batch replaces the index, so files deleted since
 * the last push disappear from it; later batches add to it. Unchanged files cost the service nothing.
 */
export async function indexCommand(context: CliContext): Promise<number> {
  const { options, client, terminal } = context;
  const root = await WorkspaceRoot.open(options.workspaceDir);
  const paths: string[] = [];
  for await (const path of workspaceFiles(root)) paths.push(path);

  const totals: IndexTotals = {
    workspaceId: options.workspaceId,
    files: 0,
    upserted: 0,
    unchanged: 0,
    deleted: 0,
    chunks: 0,
    skipped: [],
  };
  const bar = context.streams.stdout.isTTY
    ? new cliProgress.SingleBar(
        { format: "indexing {bar} {value}/{total} files", stream: context.streams.stdout, hideCursor: true },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  bar?.start(paths.length, 0);
  let batch: WorkspaceDocument[] = [];
  let batchBytes = 0;
  let first = true;
  let done = 0;
  const push = async () => {
    const pushed = await client.workspaces.upsert(options.workspaceId, { documents: batch, replace: first });
    if (!pushed.successful) return pushed.errors;
    first = false;
    totals.files += batch.length;
    totals.upserted += pushed.result.upserted;
    totals.unchanged += pushed.result.unchanged;
    totals.deleted += pushed.result.deleted;
    totals.chunks = pushed.result.chunks;
    bar?.update(done);
    batch = [];
    batchBytes = 0;
    return undefined;
  };
  try {
    for (const path of paths) {
      const document = await documentOf(root, path);
      done += 1;
      if (typeof document === "string") {
        totals.skipped.push({ path, reason: document });
        continue;
      }
      const bytes = Buffer.byteLength(document.contents);
      if (batch.length === WORKSPACE_LIMITS.maxDocumentsPerRequest || batchBytes + bytes > MAX_BATCH_BYTES) {
        const errors = await push();
        if (errors) return failed(context, errors);
      }
      batch.push(document);
      batchBytes += bytes;
    }
    // The last batch; with no file at all, an empty replacing push empties the index.
    if (batch.length > 0 || first) {
      const errors = await push();
      if (errors) return failed(context, errors);
    }
    bar?.update(paths.length);
  } finally {
    bar?.stop();
  }

  if (options.json) {
    context.streams.stdout.write(`${JSON.stringify(totals)}\n`);
  } else {
    for (const { path, reason } of totals.skipped)
      terminal.line(terminal.style("dim", `skipped ${path}: ${reason}`));
    terminal.line(
      `Indexed ${totals.files} files into workspace ${totals.workspaceId}: ${totals.upserted} new or changed, ` +
        `${totals.unchanged} unchanged, ${totals.deleted} deleted; ${totals.chunks} chunks.`,
    );
  }
  return EXIT.done;
}

/** The file as a document, or why it is skipped. */
async function documentOf(root: WorkspaceRoot, path: string): Promise<WorkspaceDocument | string> {
  const file = await readTextFile(join(root.path, path), WORKSPACE_LIMITS.maxDocumentBytes);
  if (file.kind === "binary") return "binary";
  if (file.kind === "too_large") return `${file.bytes} bytes, more than ${WORKSPACE_LIMITS.maxDocumentBytes}`;
  const document = WorkspaceDocumentSchema.safeParse({ path, contents: file.text });
  if (!document.success) {
    const issue = document.error.issues[0];
    return `${issue?.path.join(".")} ${issue?.message}`;
  }
  return document.data;
}

function failed(context: CliContext, errors: ReadonlyArray<{ code: string; message: string }>): number {
  const { terminal, options } = context;
  for (const error of errors) terminal.line(terminal.style("red", `${error.code}: ${error.message}`));
  if (options.json)
    context.streams.stdout.write(`${JSON.stringify({ workspaceId: options.workspaceId, errors })}\n`);
  return EXIT.failed;
}
