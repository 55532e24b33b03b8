import { availableParallelism } from "node:os";
import type { DocumentPreparation, PrepareDocumentInput, PreparedDocument } from "@aptix/core";
import { Piscina } from "piscina";

export interface DocumentPreparationPoolOptions {
  /** Worker threads at most. Default: one fewer than the machine's cores, at least one. */
  maxThreads?: number;
}

/** Idle threads end after this long, so an instance that is not pushed to holds no thread's memory. */
const IDLE_TIMEOUT_MS = 30_000;

/**
 * Runs `prepareDocument` (hashing, chunking, terms) in a pool of worker threads, so a push never holds the
 * event loop while it cuts megabytes of text. Piscina keeps the pool: threads start on demand and end when
 * idle, tasks queue when all are busy, and a thread that dies fails its task and is replaced.
 */
export class DocumentPreparationPool implements DocumentPreparation {
  readonly #pool: Piscina<PrepareDocumentInput, PreparedDocument>;

  constructor(options: DocumentPreparationPoolOptions = {}) {
    const maxThreads = options.maxThreads ?? Math.max(1, availableParallelism() - 1);
    this.#pool = new Piscina({ ...workerScript(), minThreads: 0, maxThreads, idleTimeout: IDLE_TIMEOUT_MS });
  }

  prepare(input: PrepareDocumentInput): Promise<PreparedDocument> {
    return this.#pool.run(input);
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
