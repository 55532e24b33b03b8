import { QuotaExceededError, type UpsertDocumentsInput } from "@aptix/core";
import { and, eq, inArray, not, type SQL, sql } from "drizzle-orm";
import { workspaceDocuments, workspaces } from "../../schema.js";
import type { StoreTransaction } from "../rows.js";

/** First key of the advisory lock that makes one principal's quota-checked pushes take turns ("AptW"). */
const WORKSPACE_QUOTA_LOCK_CLASS = 0x41707457;

/**
 * `upsertDocuments`' quota (APTIX_QUOTA_WORKSPACE_BYTES), judged in its transaction before it writes: throws
 * QuotaExceededError when the principal's documents in every workspace, the upsert's own counted at their new
 * size (and those `replace` deletes not at all), would pass `quotaBytes`. The principal's advisory lock, held to
 * the commit, makes concurrent pushes to its workspaces count each other's documents. Sums the principal's
 * documents: a push costs a read of their sizes.
 */
export async function judgeWorkspaceQuota(
  tx: StoreTransaction,
  input: UpsertDocumentsInput & { quotaBytes: number },
  workspace: number,
  paths: string[],
): Promise<void> {
  const { principal } = input.key;
  await tx.execute(sql`select pg_advisory_xact_lock(${WORKSPACE_QUOTA_LOCK_CLASS}, hashtext(${principal}))`);
  // The upsert's own documents: those it writes anew, or with `replace` every one of the workspace.
  const own = input.replace
    ? sql`true`
    : paths.length === 0
      ? sql`false`
      : inArray(workspaceDocuments.path, paths);
  const [used] = await tx
    .select({ bytes: sql<string>`coalesce(sum(${workspaceDocuments.sizeBytes}), 0)` })
    .from(workspaceDocuments)
    .innerJoin(workspaces, eq(workspaces.id, workspaceDocuments.workspace))
    .where(
      and(
        eq(workspaces.principal, principal),
        not(and(eq(workspaceDocuments.workspace, workspace), own) as SQL),
      ),
    );
  const usedBytes = Number(used?.bytes ?? 0);
  const addedBytes = input.documents.reduce((sum, document) => sum + (document.sizeBytes ?? 0), 0);
  if (usedBytes + addedBytes > input.quotaBytes) {
    throw new QuotaExceededError("APTIX_QUOTA_WORKSPACE_BYTES", usedBytes, addedBytes, input.quotaBytes);
  }
}
