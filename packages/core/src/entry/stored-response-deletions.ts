import type { Clock } from "../ports/clock.js";
import type { LlmProvider } from "../ports/llm-provider.js";
import type { ResponseDeletion, SessionDirectory } from "../ports/session-directory.js";

/** Deletions asked of the providers per run. */
const BATCH = 50;
/** How long a deletion taken by a run is not due for another run (a run that stops midway loses none). */
const TAKEN_FOR_MS = 10 * 60_000;
/** Attempts before a deletion is given up, and the wait after the first failure (doubling, at most a day). */
const MAX_ATTEMPTS = 12;
const FIRST_RETRY_MS = 60_000;
const LONGEST_RETRY_MS = 24 * 3_600_000;

/** What one run did: for the housekeeping's log lines. */
export interface StoredResponseDeletionRun {
  deleted: number;
  /** Failed this time; tried again later. */
  failed: Array<{ provider: string; attempts: number; reason: string }>;
  /** Failed for the last time: left at the provider (which expires stored responses on its own, in 30 days). */
  abandoned: number;
}

/**
 * Deletes at their provider the responses it stored for sessions since deleted (docs/security.md, delete means gone):
 * best effort, each deletion tried again with a growing wait until the provider confirms or MAX_ATTEMPTS.
 */
export class StoredResponseDeletions {
  constructor(
    private readonly directory: Pick<SessionDirectory, "takeResponseDeletions" | "finishResponseDeletions">,
    private readonly providers: ReadonlyMap<string, LlmProvider>,
    private readonly clock: Clock,
  ) {}

  async run(): Promise<StoredResponseDeletionRun> {
    const now = this.clock.now();
    const due = await this.directory.takeResponseDeletions({
      limit: BATCH,
      dueBy: now,
      retryAt: new Date(now.getTime() + TAKEN_FOR_MS),
    });
    const run: StoredResponseDeletionRun = { deleted: 0, failed: [], abandoned: 0 };
    const done: ResponseDeletion[] = [];
    const failed: Array<ResponseDeletion & { retryAt: Date }> = [];
    for (const deletion of due) {
      const answer = await this.#delete(deletion);
      if (answer.deleted) {
        run.deleted++;
        done.push(deletion);
      } else if (deletion.attempts + 1 >= MAX_ATTEMPTS) {
        run.abandoned++;
        done.push(deletion);
      } else {
        const waitMs = Math.min(FIRST_RETRY_MS * 2 ** deletion.attempts, LONGEST_RETRY_MS);
        failed.push({ ...deletion, retryAt: new Date(this.clock.now().getTime() + waitMs) });
        run.failed.push({
          provider: deletion.provider,
          attempts: deletion.attempts + 1,
          reason: answer.reason,
        });
      }
    }
    if (done.length > 0 || failed.length > 0) await this.directory.finishResponseDeletions({ done, failed });
    return run;
  }

  async #delete({ provider, responseId }: ResponseDeletion) {
    const source = this.providers.get(provider);
    if (source?.deleteStoredResponse === undefined) {
      return {
        deleted: false as const,
        reason: `no provider ${JSON.stringify(provider)} deletes responses here`,
      };
    }
    return source.deleteStoredResponse(responseId);
  }
}
