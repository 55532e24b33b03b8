import type { AptixClient } from "@aptix/client";

/**
 * Pushes a workspace's files (all of them: `replace` deletes what is gone) and returns where `query` is found,
 * as `path:start-end` lines, best first.
 */
export async function indexAndSearch(
  client: AptixClient,
  workspaceId: string,
  files: ReadonlyMap<string, string>,
  query: string,
) {
  const documents = [...files].map(([path, contents]) => ({ path, contents }));
  const pushed = await client.workspaces.upsert(workspaceId, { documents, replace: true });
  if (!pushed.successful) throw new Error(pushed.errors[0].message);
  const found = await client.workspaces.search(workspaceId, { query, limit: 3 });
  if (!found.successful) throw new Error(found.errors[0].message);
  return found.result.chunks.map((chunk) => `${chunk.path}:${chunk.startLine}-${chunk.endLine}`);
}
