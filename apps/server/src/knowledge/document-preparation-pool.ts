import { availableParallelism } from "node:os";
import type { InvokeResult, PutWorkspaceDocumentsRequest } from "@aptix/contracts";
import type { DocumentPreparation, PrepareDocumentInput, PreparedDocument } from "@aptix/core";
import { Piscina } from "piscina";

export interface DocumentPreparationPoolOptions {
  /** Worker threads at most. Default: one fewer than the machine's cores, at least one. */
  maxThreads?: number;
}

/** Idle threads end after this long, so an instance that is not pushed to holds no thread's memory. */
const IDLE_TIMEOUT_MS = 30_000;

/**
 * Runs `prepareDocument` (hashing, chunking, terms) and `readPushBody` (parsing and validating a push) in a
 * pool of worker threads, so a push never holds the event loop while it reads and cuts megabytes of text.
 * Piscina keeps the pool: threads start on demand and end when idle, tasks queue when all are busy, and a
 * thread that dies fails its task and is replaced.
 */
export class DocumentPreparationPool implements DocumentPreparation {
  readonly #pool: Piscina;

  constructor(options: DocumentPreparationPoolOptions = {}) {
    const maxThreads = options.maxThreads ?? Math.max(1, availableParallelism() - 1);
    this.#pool = new Piscina({ ...workerScript(), minThreads: 0, maxThreads, idleTimeout: IDLE_TIMEOUT_MS });
  }

  prepare(input: PrepareDocumentInput): Promise<PreparedDocument> {
    return this.#pool.run(input);
  }

  /** `readPushBody` in a thread; the body is copied there. */
  readPushBody(body: Uint8Array): Promise<InvokeResult<PutWorkspaceDocumentsRequest>> {
    return this.#pool.run(body, { name: "readPushBody" });
  }

  /** Ends the threads; a task still queued fails. */
  close(): Promise<void> {
    return this.#pool.destroy();
  }
}

/**
 * The worker's module beside this one. Run from the TypeScript sources (`pnpm dev`, the tests), it is a `.ts`
 * file, which the thread loads through tsx (a dev dependency, present wherever the sources run) and with the
 * `@aptix/source` condition, as its parent does; the build's `.js` needs neither.
 */
function workerScript(): { filename: string; execArgv?: string[] } {
  const fromSources = import.meta.url.endsWith(".ts");
  const filename = new URL(`./document-preparation-worker.${fromSources ? "ts" : "js"}`, import.meta.url)
    .href;
  return fromSources
    ? { filename, execArgv: ["--import", "tsx", "--conditions=@aptix/source"] }
    : { filename };
}
