import { join } from "node:path";
import { WORKSPACE_LIMITS, type WorkspaceDocument, WorkspaceDocumentSchema } from "@aptix/contracts";
import cliProgress from "cli-progress";
import { plural } from "../terminal/plural.js";
import { visibleJson } from "../terminal/visible.js";
import { readTextFile } from "../workspace/text-file.js";
import { workspaceFiles } from "../workspace/workspace-files.js";
import { WorkspaceRoot } from "../workspace/workspace-root.js";
import { type CliContext, EXIT } from "./cli-context.js";

/** Bytes of JSON documents in one request: the service's push limit, less room for the rest of the body. */
const MAX_BATCH_BYTES = WORKSPACE_LIMITS.maxPushBytes - 1024;

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
 * symlink out) in batches of at most 1,000 documents and 16 MiB, reading a batch at a time. A workspace that fits one batch
 * is pushed with `replace`, so files deleted since the last push disappear. A larger one is pushed batch by
 * batch without `replace` (unchanged files cost the service nothing); then its document count tells whether
 * the index still holds deleted files, and only then is it rebuilt: the first batch replacing the index, the
 * others pushed again.
 */
export async function indexCommand(context: CliContext): Promise<number> {
  const { options } = context;
  // The index honours .gitignore whatever --allow-ignored says: ignored files are not sent to the service.
  const root = await WorkspaceRoot.open(options.workspaceDir, { allowIgnored: false });
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
  try {
    await pushInBatches(context, root, paths, totals, (done) => bar?.update(done));
    bar?.update(paths.length);
  } catch (error) {
    if (error instanceof PushFailed) return failed(context, error.errors);
    throw error;
  } finally {
    bar?.stop();
  }
  reportTotals(context, totals);
  return EXIT.done;
}

/**
 * Pushes the files at `paths` batch by batch, counting into `totals`, and rebuilds the index when it holds more
 * documents than were pushed (as `indexCommand` tells). A refusal of the service throws `PushFailed`.
 */
async function pushInBatches(
  context: CliContext,
  root: WorkspaceRoot,
  paths: readonly string[],
  totals: IndexTotals,
  progress: (done: number) => void,
): Promise<void> {
  const { client, options } = context;
  const push = async (documents: WorkspaceDocument[], replace: boolean) => {
    const pushed = await client.workspaces.upsert(options.workspaceId, { documents, replace });
    if (!pushed.successful) throw new PushFailed(pushed.errors);
    totals.chunks = pushed.result.chunks;
    return pushed.result;
  };
  const count = (documents: WorkspaceDocument[], result: { upserted: number; unchanged: number }) => {
    totals.files += documents.length;
    totals.upserted += result.upserted;
    totals.unchanged += result.unchanged;
  };
  // The paths of the batches pushed so far, to read again if the index must be rebuilt.
  const pushedBatches: string[][] = [];
  let batch: WorkspaceDocument[] | undefined;
  for await (const next of batchesOf(root, paths, totals.skipped, progress)) {
    if (batch) {
      count(batch, await push(batch, false));
      pushedBatches.push(batch.map((document) => document.path));
    }
    batch = next;
  }
  const last = batch ?? [];
  if (pushedBatches.length === 0) {
    // One batch, or none: an empty replacing push empties the index.
    const result = await push(last, true);
    count(last, result);
    totals.deleted = result.deleted;
    return;
  }
  count(last, await push(last, false));
  const summary = await client.workspaces.get(options.workspaceId);
  if (!summary.successful) throw new PushFailed(summary.errors);
  const stale = summary.result.documents - totals.files;
  if (stale <= 0) return;
  for (const [index, batchPaths] of pushedBatches.entries()) {
    await push(await documentsAt(root, batchPaths), index === 0);
  }
  await push(last, false);
  totals.deleted = stale;
}

/** The totals as JSON (`--json`), or the skipped files and one line of counts. */
function reportTotals(context: CliContext, totals: IndexTotals): void {
  const { options, terminal } = context;
  if (options.json) {
    context.streams.stdout.write(`${visibleJson(totals)}\n`);
    return;
  }
  for (const { path, reason } of totals.skipped)
    terminal.line(terminal.style("dim", `skipped ${path}: ${reason}`));
  terminal.line(
    `Indexed ${plural(totals.files, "file")} into workspace ${totals.workspaceId}: ${totals.upserted} new or changed, ` +
      `${totals.unchanged} unchanged, ${totals.deleted} deleted; ${plural(totals.chunks, "chunk")}.`,
  );
}

/** A push or read the service refused: the command ends with its errors. */
class PushFailed extends Error {
  constructor(readonly errors: ReadonlyArray<{ code: string; message: string }>) {
    super(errors[0]?.message ?? "the service refused the push");
  }
}

/**
 * The workspace's documents in batches of at most 1,000 and `MAX_BATCH_BYTES` of JSON, read as they are
 * needed; files that cannot be documents go to `skipped`.
 */
async function* batchesOf(
  root: WorkspaceRoot,
  paths: readonly string[],
  skipped: IndexTotals["skipped"],
  progress: (done: number) => void,
): AsyncGenerator<WorkspaceDocument[]> {
  let batch: WorkspaceDocument[] = [];
  let batchBytes = 0;
  for (const [index, path] of paths.entries()) {
    const document = await documentOf(root, path);
    progress(index + 1);
    if (typeof document === "string") {
      skipped.push({ path, reason: document });
      continue;
    }
    // As the body carries it: escapes make a document's JSON larger than its contents.
    const bytes = Buffer.byteLength(JSON.stringify(document)) + 1;
    if (batch.length === WORKSPACE_LIMITS.maxDocumentsPerRequest || batchBytes + bytes > MAX_BATCH_BYTES) {
      yield batch;
      batch = [];
      batchBytes = 0;
    }
    batch.push(document);
    batchBytes += bytes;
  }
  if (batch.length > 0) yield batch;
}

/** The documents at `paths` read again, for a rebuild; a file gone or changed since is skipped or sent as it is now. */
async function documentsAt(root: WorkspaceRoot, paths: readonly string[]): Promise<WorkspaceDocument[]> {
  const documents: WorkspaceDocument[] = [];
  for (const path of paths) {
    const document = await documentOf(root, path);
    if (typeof document !== "string") documents.push(document);
  }
  return documents;
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
    context.streams.stdout.write(`${visibleJson({ workspaceId: options.workspaceId, errors })}\n`);
  return EXIT.failed;
}
